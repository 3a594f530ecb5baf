package reports

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// A machine busy for a stretch is one line of the story, however many
// seconds the watcher noted it: an idle lab on a busy machine does not
// grow a line a second. A stretch after something else happened is a line
// of its own.
func TestAnOversubscribedStretchIsOneLine(t *testing.T) {
	s := func(n int64) int64 { return n * 1_000_000_000 }
	var events []history.Event
	for i := int64(1); i <= 30; i++ {
		events = append(events, history.Event{Time: s(i + 1), Type: history.Observed, What: history.ObservedStarved, StalledFrom: s(i)})
	}
	events = append(events,
		history.Event{Time: s(40), Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l"},
		history.Event{Time: s(42), Type: history.Observed, What: history.ObservedStarved, StalledFrom: s(41)})
	lines := story(events)
	require.Len(t, lines, 3)
	assert.Equal(t, "1.00s: the machine's CPUs were oversubscribed from 1.00s to 31.00s: the run was slowed", lines[0])
	assert.Equal(t, "40.00s: c1 asks for the lock", lines[1])
	assert.Equal(t, "42.00s: the machine's CPUs were oversubscribed since 41.00s: the run was slowed", lines[2])
}
