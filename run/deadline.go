package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
)

// ErrIgnoredDeadline is an acquire's answer when the lock's Acquire had
// not returned history.DeadlineWait after its context's deadline: the lock
// ignores its context (lock.Locker: Acquire returns ctx's error once ctx
// ends), and the lab stopped waiting for it. The deadline check FAILs it.
var ErrIgnoredDeadline = fmt.Errorf("lock: Acquire had not returned %v after its context's deadline: "+
	"it must return the context's error once the context ends", history.DeadlineWait)

// errStuck: a step of a client whose Locker is still in an Acquire the lab
// stopped waiting for.
var errStuck = errors.New("its Locker is still in the Acquire that ignored its deadline, so the lab cannot use it")

// lockerAcquire calls w's Locker's Acquire with actx and waits for the
// answer until deadline (actx's, or later for a lock run as a process: see
// process.StopAllowance) and history.DeadlineWait after. A lock that has not
// answered by then ignores its context: the lab stops waiting
// (ErrIgnoredDeadline) and does not use w's Locker again — w is stuck —
// until a crash gives the client a new one; Close waits for the call.
func (e *Env) lockerAcquire(actx context.Context, w *worker, deadline time.Time) (lock.Grant, error) {
	type answer struct {
		g   lock.Grant
		err error
	}
	ch := make(chan answer, 1)
	l := w.locker
	go func() {
		g, err := l.Acquire(actx)
		ch <- answer{g, err}
	}()
	timer := time.NewTimer(time.Until(deadline) + history.DeadlineWait)
	defer timer.Stop()
	select {
	case a := <-ch:
		return a.g, a.err
	case <-timer.C:
	}
	done := make(chan struct{})
	go func() {
		<-ch
		close(done)
	}()
	e.mu.Lock()
	w.stuck = true
	e.abandoned = append(e.abandoned, done)
	e.mu.Unlock()
	return lock.Grant{}, ErrIgnoredDeadline
}

// checkStuck is errStuck, naming client, if its Locker is stuck.
func (e *Env) checkStuck(w *worker) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if w.stuck {
		return fmt.Errorf("client %s: %w", w.name, errStuck)
	}
	return nil
}

// waitAbandoned waits, until ctx ends, for the Acquire calls the lab
// stopped waiting for (their Lockers and clients closed by now, which ends
// what they wait for): nothing of the run outlives it.
func (e *Env) waitAbandoned(ctx context.Context) error {
	e.mu.Lock()
	calls := e.abandoned
	e.abandoned = nil
	e.mu.Unlock()
	for _, done := range calls {
		select {
		case <-done:
		case <-ctx.Done():
			return fmt.Errorf("an Acquire that ignored its deadline had still not returned when the run closed: %w", ctx.Err())
		}
	}
	return nil
}
