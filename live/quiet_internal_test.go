package live

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
)

// The page follows what happens, not the machine watcher's note, once a
// second, that the machine is busy: an idle lab's page stays quiet.
func TestTheIdlePageIsQuietOnABusyMachine(t *testing.T) {
	starved := history.Event{Type: history.Observed, What: history.ObservedStarved}
	assert.True(t, onlyStarved([]history.Event{starved, starved}))
	assert.False(t, onlyStarved([]history.Event{starved, {Type: history.LeaseLost, Client: "c1"}}))
}
