package models_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// The request after an acquire's write is lost while that acquire is
// under way: the effect happened. Not seen, or seen with no acquire of the
// client's under way, it is missing and says why.
func TestARequestLostUnderAnAcquireIsTheLessonsEffect(t *testing.T) {
	effect := []history.Effect{{Kind: history.EffectRequestLost, Clients: []string{"c2"}}}
	ops := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 1},
		{client: "c2", op: A, call: 20, ret: 200, typ: history.Fail},
	}
	lostAt := func(t int64) history.Event {
		return history.Event{Time: t, Type: history.Observed, What: history.ObservedRequestLost, Client: "c2"}
	}
	check := func(events []history.Event) models.EffectResult {
		res := models.CheckEffects(effect, events)
		return res[0]
	}
	assert.True(t, check(append(build(ops, nil, nil), lostAt(50))).Happened)

	none := check(build(ops, nil, nil))
	assert.False(t, none.Happened)
	assert.Contains(t, none.Missing, "no request of c2's was lost after its acquire's write")

	after := check(append(build(ops, nil, nil), lostAt(500)))
	assert.False(t, after.Happened)
	assert.Contains(t, after.Missing, "no acquire of c2 was under way when its request was lost")
}
