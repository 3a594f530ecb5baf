package etcdrun

import (
	"context"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/run"
)

// followLost follows g's Grant.Lost, client's newest grant (FollowLost),
// until the run's monitor stops or the lab replaces client's Locker.
func (e *Env) followLost(client string, w *worker, g lock.Grant) {
	e.mu.Lock()
	quit := w.quit
	e.mu.Unlock()
	told := run.FollowLost(&e.following, e.runs, client, g, quit, e.monitorCtx.Done())
	e.mu.Lock()
	w.told = told
	e.mu.Unlock()
}

// WaitTold waits until the lock tells client that its newest grant's
// lease is gone (WaitToldOn).
func (e *Env) WaitTold(ctx context.Context, client string) (run.Outcome, error) {
	w, err := e.worker(client)
	if err != nil {
		return run.Outcome{}, err
	}
	e.mu.Lock()
	g, told := w.grant, w.told
	e.mu.Unlock()
	return run.WaitToldOn(ctx, client, g, told)
}
