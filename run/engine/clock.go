package engine

import (
	"context"
	"fmt"
	"strconv"
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
	DriftClock(i int, rate float64) error
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

// DriftClock runs the wall clock of server i, the script's member, at
// rate times the machine's until heal sets it right: a drift-clock fault
// on every history.
func (e *Engine) DriftClock(ctx context.Context, clocks Clocks, member string, i int, rate float64) (run.Outcome, error) {
	_, err := e.Apply(ctx, faults.Fault{Kind: faults.DriftClock, Member: member, Rate: rate},
		func(_ context.Context, in *faults.Injection) error {
			if err := clocks.DriftClock(i, rate); err != nil {
				return err
			}
			in.SetTarget(fmt.Sprintf("its clock at ×%s", strconv.FormatFloat(rate, 'f', -1, 64)))
			in.SetUndo(func(context.Context) error { return clocks.ResetClock(i) })
			return nil
		})
	if err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.ClockDrifts, Member: member, Rate: rate}, nil
}
