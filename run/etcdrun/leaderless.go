package etcdrun

import (
	"context"
	"time"

	"github.com/locklab/locklab/run"
)

// leaderTick is how often an embedded cluster's members are asked whether
// they follow a leader (a look at each server's state); a cluster of the
// user's own is asked by a status request to each member, less often.
const (
	leaderTick         = 50 * time.Millisecond
	externalLeaderTick = 500 * time.Millisecond
)

// watchLeaders records, on every history, each span in which a member of
// the run's cluster was without its leader (see WatchLeaders).
func (e *Env) watchLeaders(ctx context.Context, hs run.Histories) {
	tick := leaderTick
	if e.c.IsExternal() {
		tick = externalLeaderTick
	}
	views := func(ctx context.Context) []run.LeaderView {
		var out []run.LeaderView
		for _, v := range e.c.LeaderViews(ctx) {
			out = append(out, run.LeaderView{Member: v.Member, Follows: v.Follows, Term: v.Term})
		}
		return out
	}
	run.WatchLeaders(ctx, tick, views, hs.Leaderless)
}
