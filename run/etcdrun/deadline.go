package etcdrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/run"
)

// lockerAcquire calls w's Locker's Acquire with actx and waits for the
// answer until deadline and history.DeadlineWait after (run.Abandoned): a
// lock that has not answered by then ignores its context, and w is stuck —
// the lab does not use its Locker again — until a crash gives the client a
// new one; Close waits for the call.
func (e *Env) lockerAcquire(actx context.Context, w *worker, deadline time.Time) (lock.Grant, error) {
	g, err := e.abandoned.Acquire(actx, w.locker, deadline)
	if errors.Is(err, run.ErrIgnoredDeadline) {
		e.mu.Lock()
		w.stuck = true
		e.mu.Unlock()
	}
	return g, err
}

// checkStuck is run.ErrStuck, naming client, if its Locker is stuck.
func (e *Env) checkStuck(w *worker) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if w.stuck {
		return fmt.Errorf("client %s: %w", w.name, run.ErrStuck)
	}
	return nil
}
