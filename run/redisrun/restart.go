package redisrun

import (
	"context"
	"errors"

	"github.com/locklab/locklab/run"
)

// Restart crashes member and starts it again at once, as a supervisor
// does: the lab runs Redis without RDB or AOF, so it comes back empty —
// every lock key, and the counter tokens come from, gone (a replica
// syncing from an empty primary is emptied too; one of Redlock's masters
// comes back without the keys it held, at once, not after the delay
// Redlock asks of a restart).
func (e *Env) Restart(ctx context.Context, member string) (run.Outcome, error) {
	i, err := e.member(member)
	if err != nil {
		return run.Outcome{}, err
	}
	if e.set.External() {
		return run.Outcome{}, errors.New("restart: a Redis of your own is not the lab's to restart")
	}
	out, err := e.Engine.Restart(ctx, member, func() { e.set.Kill(i) }, func(ctx context.Context) error {
		return e.set.Restart(ctx, i)
	})
	if err == nil {
		e.Sever()                           // connections to the dead server break; new ones reach the new
		e.sweep(context.WithoutCancel(ctx)) // the lost keys are seen gone now, before anyone is granted again
	}
	return out, err
}
