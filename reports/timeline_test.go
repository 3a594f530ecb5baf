package reports

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// An acquire whose outcome is unknown (its answer was lost) is drawn
// waiting until its client heard so, not to the end of the history: c2
// stopped waiting at 49 ms, while c1 went on to a grant at 5 s.
func TestUnknownAcquireWaitsUntilAnswered(t *testing.T) {
	ms := func(n int64) int64 { return n * 1_000_000 }
	events := []history.Event{
		{Time: ms(12), Type: history.Invoke, ID: 1, Client: "c2", Op: history.Acquire, Lock: "l"},
		{Time: ms(49), Type: history.Info, ID: 1, Client: "c2", Op: history.Acquire, Lock: "l", Error: "connection lost"},
		{Time: ms(5000), Type: history.Invoke, ID: 2, Client: "c1", Op: history.Acquire, Lock: "l"},
		{Time: ms(5010), Type: history.Ok, ID: 2, Client: "c1", Op: history.Acquire, Lock: "l", Token: 7},
		{Time: ms(5020), Type: history.Invoke, ID: 3, Client: "c1", Op: history.Release, Lock: "l"},
		{Time: ms(5030), Type: history.Ok, ID: 3, Client: "c1", Op: history.Release, Lock: "l"},
	}
	tl := buildTimeline(events)
	var c1, c2 *lane
	for i := range tl.Lanes {
		switch tl.Lanes[i].Client {
		case "c1":
			c1 = &tl.Lanes[i]
		case "c2":
			c2 = &tl.Lanes[i]
		}
	}
	require.NotNil(t, c2)
	require.NotNil(t, c1)
	require.Len(t, c2.Waiting, 1)
	require.Len(t, c1.Waiting, 1)
	assert.Less(t, c2.Waiting[0].X+c2.Waiting[0].W, c1.Waiting[0].X, "c2's wait ends before c1 asks")
}

// The callouts name what happened without a browser: fenced, the rejected
// stale write and the tokens that decided it; unfenced, both writes of the
// lost update.
func TestCalloutsNameTheRejectionAndTheLostUpdate(t *testing.T) {
	texts := func(name string) (out []string, lost int) {
		_, events, err := history.ReadFile("testdata/paused-holder-" + name + ".history.jsonl")
		require.NoError(t, err)
		for _, l := range buildTimeline(events).Lanes {
			for _, c := range l.Callouts {
				out = append(out, c.Text)
			}
			for _, w := range l.Writes {
				if w.Lost {
					lost++
				}
			}
		}
		return out, lost
	}
	fenced, lost := texts("fenced")
	assert.Equal(t, []string{"rejected: token t1 < t2"}, fenced)
	assert.Zero(t, lost)
	unfenced, lost := texts("unfenced")
	assert.ElementsMatch(t, []string{"lost update: c2 also wrote 1", "lost update: c1 also wrote 1"}, unfenced)
	assert.Equal(t, 2, lost)
}
