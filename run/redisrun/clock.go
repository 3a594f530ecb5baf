package redisrun

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/run"
)

// JumpClock moves member's wall clock by offset (negative: back) until
// heal sets it right. Redis expires a key by its server's wall clock: a
// clock moved forward past a key's expiry expires it at once, one moved
// back lets it live longer. Only a set the lab started with clocks (see
// redisd.Options.Clocks) can.
func (e *Env) JumpClock(ctx context.Context, member string, offset time.Duration) (run.Outcome, error) {
	i, err := e.member(member)
	if err != nil {
		return run.Outcome{}, err
	}
	if e.set.External() {
		return run.Outcome{}, fmt.Errorf("jump-clock: the clock of a Redis of your own is out of the lab's reach")
	}
	_, err = e.Apply(ctx, faults.Fault{Kind: faults.JumpClock, Member: member, Offset: faults.Duration(offset)},
		func(_ context.Context, in *faults.Injection) error {
			if err := e.set.JumpClock(i, offset); err != nil {
				return err
			}
			in.SetTarget(fmt.Sprintf("its clock %s off", history.Signed(e.set.ClockOffset(i))))
			in.SetUndo(func(context.Context) error { return e.set.ResetClock(i) })
			return nil
		})
	if err != nil {
		return run.Outcome{}, err
	}
	// What the jump expired is seen gone now, before anyone is granted.
	e.sweep(context.WithoutCancel(ctx))
	return run.Outcome{Kind: run.ClockJumped, Member: member, For: e.set.ClockOffset(i)}, nil
}
