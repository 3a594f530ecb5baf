package models_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// A waiter whose acquire reached its deadline before the holder released
// was handed nothing: the hand-over the expire-while-waiting lessons are
// about did not happen, and the run is vacuous — never a PASS for a lock
// that would have been granted on its ended lease.
func TestAWaiterThatTimedOutBeforeTheReleaseWasHandedNothing(t *testing.T) {
	effect := []history.Effect{{Kind: history.EffectReleasedWhileWaiting, Clients: []string{"c1", "c2"}}}
	events := func(deadline, answered int64) []history.Event {
		evs := build([]op{
			{client: "c1", op: A, call: 0, ret: 10, token: 1},
			{client: "c2", op: A, call: 20, ret: answered, typ: history.Fail},
			{client: "c1", op: R, call: 300, ret: 310},
		}, nil, nil)
		for i, e := range evs {
			if e.Type == history.Invoke && e.Client == "c2" {
				evs[i].Deadline = deadline
			}
		}
		return append(evs, history.Event{Time: 30, Type: history.Observed, What: history.ObservedQueued, Client: "c2"})
	}
	timedOut := models.CheckEffects(effect, events(200, 201))[0]
	assert.False(t, timedOut.Happened)
	assert.Contains(t, timedOut.Missing, "c2's acquire reached its deadline")

	waited := models.CheckEffects(effect, events(1000, 400))[0]
	assert.True(t, waited.Happened, waited.Missing)
	told := models.CheckEffects(effect, events(1000, 100))[0]
	assert.True(t, told.Happened, "told before its deadline: the lock's own answer, not the machine's: %s", told.Missing)
}

// A waiter that gave up at its deadline put the lesson to the lock only
// if it was seen waiting first: one a slow machine kept from the server
// until its deadline left nothing behind, and the run is vacuous.
func TestAGaveUpWaiterMustHaveBeenSeenWaiting(t *testing.T) {
	effect := []history.Effect{{Kind: history.EffectGaveUp, Clients: []string{"c2", "c1"}}}
	events := func(queued bool) []history.Event {
		evs := build([]op{
			{client: "c1", op: A, call: 0, ret: 10, token: 1},
			{client: "c2", op: A, call: 20, ret: 220, typ: history.Fail},
			{client: "c1", op: R, call: 300, ret: 310},
		}, nil, nil)
		for i, e := range evs {
			if e.Type == history.Invoke && e.Client == "c2" {
				evs[i].Deadline = 200
			}
		}
		if queued {
			evs = append(evs, history.Event{Time: 40, Type: history.Observed, What: history.ObservedQueued, Client: "c2"})
		}
		return evs
	}
	seen := models.CheckEffects(effect, events(true))[0]
	assert.True(t, seen.Happened, seen.Missing)
	unseen := models.CheckEffects(effect, events(false))[0]
	assert.False(t, unseen.Happened)
	assert.Contains(t, unseen.Missing, "without having been seen waiting")
}
