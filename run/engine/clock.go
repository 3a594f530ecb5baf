package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/run"
)

// Clocks are a store's servers' wall clocks, by server index, as a set of
// servers the lab started with clocks it can move has them (redisd.Set,
// zkd.Ensemble).
type Clocks interface {
	JumpClock(i int, d time.Duration) error
	ResetClock(i int) error
	ClockOffset(i int) time.Duration
}

// JumpClock moves the wall clock of server i, the script's member, by
// offset (negative: back) until heal sets it right: a jump-clock fault on
// every history.
func (e *Engine) JumpClock(ctx context.Context, clocks Clocks, member string, i int, offset time.Duration) (run.Outcome, error) {
	_, err := e.Apply(ctx, faults.Fault{Kind: faults.JumpClock, Member: member, Offset: faults.Duration(offset)},
		func(_ context.Context, in *faults.Injection) error {
			if err := clocks.JumpClock(i, offset); err != nil {
				return err
			}
			in.SetTarget(fmt.Sprintf("its clock %s off", history.Signed(clocks.ClockOffset(i))))
			in.SetUndo(func(context.Context) error { return clocks.ResetClock(i) })
			return nil
		})
	if err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.ClockJumped, Member: member, For: clocks.ClockOffset(i)}, nil
}
