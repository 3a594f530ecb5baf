package engine

import (
	"context"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/run"
)

// Restart crashes member with kill and starts it again at once with start,
// as a supervisor restarts a crashed server: a kill-member window from the
// crash to the restart, on every history.
func (e *Engine) Restart(ctx context.Context, member string, kill func(), start func(context.Context) error) (run.Outcome, error) {
	in, err := e.Apply(ctx, faults.Fault{Kind: faults.KillMember, Member: member}, func(_ context.Context, in *faults.Injection) error {
		in.SetTarget(member)
		kill()
		in.SetUndo(start)
		return nil
	})
	if err != nil {
		return run.Outcome{}, err
	}
	if err := in.Undo(ctx); err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Restarted, Member: member}, nil
}
