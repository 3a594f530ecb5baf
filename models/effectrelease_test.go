package models_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// A release took effect unanswered when the server was seen to take it
// while the client still had no answer: the release ended unanswered, or
// answered later (the client's own retry on a new connection learned it).
// One answered before the lab saw the server take it lost nothing.
func TestAReleaseTookEffectUnansweredOnlyBeforeItsAnswer(t *testing.T) {
	effect := []history.Effect{{Kind: history.EffectReleaseUnanswered, Clients: []string{"c1"}}}
	seenAt := func(typ history.Type, ret, seen int64) models.EffectResult {
		evs := append(build([]op{{client: "c1", op: R, call: 10, ret: ret, typ: typ}}, nil, nil),
			history.Event{Time: seen, Type: history.Observed, What: history.ObservedReleased, Client: "c1"})
		slices.SortStableFunc(evs, func(x, y history.Event) int { return int(x.Time - y.Time) })
		return models.CheckEffects(effect, evs)[0]
	}
	unanswered := seenAt(history.Info, 50, 30)
	assert.True(t, unanswered.Happened, unanswered.Missing)
	retried := seenAt(history.Ok, 50, 30)
	assert.True(t, retried.Happened, retried.Missing)
	answered := seenAt(history.Ok, 20, 30)
	assert.False(t, answered.Happened)
	assert.Contains(t, answered.Missing, "had its answer before the server was seen to take it")
	never := models.CheckEffects(effect, build([]op{{client: "c1", op: R, call: 10, ret: 50, typ: history.Info}}, nil, nil))[0]
	assert.False(t, never.Happened)
	assert.Contains(t, never.Missing, "never seen")
}
