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

// Two short faults close together are drawn in rows of their own, so that
// the first one's name, wider than its bar, is not written over by the
// second's; a fault near the right edge keeps its name inside the drawing.
// A wait long enough is labelled with how long it lasted and how it ended.
func TestNarrowFaultsAndWaitsAreLabelledApart(t *testing.T) {
	ms := func(n int64) int64 { return n * 1_000_000 }
	cut := func(client string) *history.FaultSpec {
		return &history.FaultSpec{Kind: history.FaultCutClient, Client: client}
	}
	events := []history.Event{
		{Time: ms(310), Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l"},
		{Time: ms(400), Type: history.Ok, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l", Token: 7},
		{Time: ms(410), Type: history.Invoke, ID: 2, Client: "c2", Op: history.Acquire, Lock: "l"},
		{Time: ms(420), Type: history.FaultStart, ID: 1, Spec: cut("c1")},
		{Time: ms(425), Type: history.FaultEnd, ID: 1, Spec: cut("c1")},
		{Time: ms(430), Type: history.FaultStart, ID: 2, Spec: cut("c2")},
		{Time: ms(435), Type: history.FaultEnd, ID: 2, Spec: cut("c2")},
		{Time: ms(700), Type: history.Fail, ID: 2, Client: "c2", Op: history.Acquire, Lock: "l", Error: "deadline"},
		{Time: ms(710), Type: history.Invoke, ID: 3, Client: "c1", Op: history.Release, Lock: "l"},
		{Time: ms(720), Type: history.Ok, ID: 3, Client: "c1", Op: history.Release, Lock: "l"},
		{Time: ms(725), Type: history.FaultStart, ID: 3, Spec: cut("c2")},
		{Time: ms(726), Type: history.FaultEnd, ID: 3, Spec: cut("c2")},
	}
	tl := buildTimeline(events)
	require.Len(t, tl.Faults, 3)
	assert.NotEqual(t, tl.Faults[0].Y, tl.Faults[1].Y, "the second fault's bar starts under the first one's name")
	last := tl.Faults[2]
	assert.LessOrEqual(t, last.LabelX+labelWidth(len([]rune(last.Label))), tl.Width, "the last name ends inside the drawing")
	var labels []string
	for _, l := range tl.Lanes {
		for _, w := range l.Waiting {
			labels = append(labels, w.Label)
		}
	}
	assert.ElementsMatch(t, []string{"waited 90ms", "not granted after 290ms"}, labels)
}
