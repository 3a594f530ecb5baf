package models_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// A client crashed while stopped inside its acquire only if a pause of it
// held when it crashed: a crash before the pause took hold, or after it
// ended, did not put the lesson to the lock.
func TestACrashWhileStoppedNeedsAPauseHoldingThen(t *testing.T) {
	effect := []history.Effect{{Kind: history.EffectCrashedPaused, Clients: []string{"c1"}, What: "in its acquire"}}
	pause := &history.FaultSpec{Kind: history.FaultPauseClient, Client: "c1", Point: "in-acquire"}
	events := func(from, to, crash int64) []history.Event {
		return []history.Event{
			{Time: from, Type: history.FaultStart, ID: 1, Spec: pause},
			{Time: crash, Type: history.Observed, What: history.ObservedCrashed, Client: "c1"},
			{Time: to, Type: history.FaultEnd, ID: 1, Spec: pause},
		}
	}
	held := models.CheckEffects(effect, events(10, 30, 20))[0]
	assert.True(t, held.Happened, held.Missing)
	assert.Equal(t, "c1 crashed while stopped in its acquire", models.EffectName(effect[0]))

	after := models.CheckEffects(effect, events(10, 15, 20))[0]
	assert.False(t, after.Happened)
	assert.Contains(t, after.Missing, "no pause of c1 held when it crashed")

	never := models.CheckEffects(effect, events(10, 30, 20)[:1])[0]
	assert.False(t, never.Happened)
	assert.Contains(t, never.Missing, "c1 never crashed")
}
