package zkrun

import (
	"context"
	"time"

	"github.com/locklab/locklab/run"
)

// JumpClock moves member's wall clock by offset (negative: back) until
// heal sets it right. ZooKeeper stamps a node's times by it, and times
// its sessions on a monotonic clock, which the jump does not move. Only an
// ensemble the lab started with clocks (see zkd.Options.Clocks) can.
func (e *Env) JumpClock(ctx context.Context, member string, offset time.Duration) (run.Outcome, error) {
	i, err := e.member(member)
	if err != nil {
		return run.Outcome{}, err
	}
	return e.Engine.JumpClock(ctx, e.ens, member, i, offset)
}

// DriftClock runs member's wall clock at rate times the machine's until
// heal sets it right; ZooKeeper times its sessions on a monotonic clock,
// which the drift does not move. Only an ensemble the lab started with
// clocks (see zkd.Options.Clocks) can.
func (e *Env) DriftClock(ctx context.Context, member string, rate float64) (run.Outcome, error) {
	i, err := e.member(member)
	if err != nil {
		return run.Outcome{}, err
	}
	return e.Engine.DriftClock(ctx, e.ens, member, i, rate)
}
