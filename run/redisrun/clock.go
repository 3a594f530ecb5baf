package redisrun

import (
	"context"
	"errors"
	"time"

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
		return run.Outcome{}, errors.New("jump-clock: the clock of a Redis of your own is out of the lab's reach")
	}
	out, err := e.Engine.JumpClock(ctx, e.set, member, i, offset)
	if err == nil {
		// What the jump expired is seen gone now, before anyone is granted.
		e.sweep(context.WithoutCancel(ctx))
	}
	return out, err
}

// DriftClock runs member's wall clock at rate times the machine's (2:
// twice as fast) until heal sets it right. Redis expires a key by its
// server's wall clock: on a clock that runs fast, a key lives its TTL by
// that clock, less by the machine's. Only a set the lab started with
// clocks (see redisd.Options.Clocks) can.
func (e *Env) DriftClock(ctx context.Context, member string, rate float64) (run.Outcome, error) {
	i, err := e.member(member)
	if err != nil {
		return run.Outcome{}, err
	}
	if e.set.External() {
		return run.Outcome{}, errors.New("drift-clock: the clock of a Redis of your own is out of the lab's reach")
	}
	return e.Engine.DriftClock(ctx, e.set, member, i, rate)
}
