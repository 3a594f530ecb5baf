package run_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/run"
)

// A member that follows no leader for a while is one span, from the last
// look that found it following one to the first that finds it following
// one again; an election between two looks (the term grew, a leader is
// followed) is a span of its own, between them; a span still open when
// the watch ends is ended then. A member seen for the first time is no
// election.
func TestWatchLeadersNotesEachSpan(t *testing.T) {
	v := func(m string, follows bool, term uint64) run.LeaderView {
		return run.LeaderView{Member: m, Follows: follows, Term: term}
	}
	looks := [][]run.LeaderView{
		{v("m1", true, 2), v("m2", true, 2), v("m3", true, 2)},
		{v("m1", true, 2), v("m2", false, 2), v("m3", true, 2)}, // m2 loses its leader
		{v("m1", true, 2), v("m2", false, 3), v("m3", true, 2)},
		{v("m1", true, 2), v("m2", true, 3), v("m3", true, 3)}, // m2 follows again; m3 heard of the election
		{v("m1", true, 2), v("m2", true, 3), v("m3", true, 3)},
		{v("m1", false, 3), v("m2", true, 3), v("m3", true, 3)}, // m1 still without one at the end
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	var got []string
	run.WatchLeaders(ctx, time.Millisecond, func(context.Context) []run.LeaderView {
		if n == len(looks)-1 {
			cancel()
		}
		n++
		return looks[min(n-1, len(looks)-1)]
	}, func(member string, from time.Time) {
		assert.False(t, from.IsZero())
		got = append(got, member)
	})
	assert.Equal(t, []string{"m2", "m3", "m1"}, got)
}
