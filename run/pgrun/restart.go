package pgrun

import (
	"context"

	"github.com/locklab/locklab/run"
)

// Restart crashes the server (m1) and starts it again at once on its data
// directory, as a supervisor does: every session, and every advisory lock
// it held, is gone; what was committed (a sequence's nextval) is kept.
func (e *Env) Restart(ctx context.Context, member string) (run.Outcome, error) {
	if member != "m1" {
		return run.Outcome{}, e.NotHere("restart member="+member, "the server is m1")
	}
	out, err := e.Engine.Restart(ctx, member, e.srv.Kill, e.srv.Restart)
	if err == nil {
		e.Sever()
		e.sweep(context.WithoutCancel(ctx))
	}
	return out, err
}
