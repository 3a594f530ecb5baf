package run

import (
	"context"
	"errors"
	"fmt"
	"sync"
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

// ErrStuck is the answer to a step of a client whose Locker is still in an
// Acquire the lab stopped waiting for.
var ErrStuck = errors.New("its Locker is still in the Acquire that ignored its deadline, so the lab cannot use it")

// Abandoned are the Acquire calls a run stopped waiting for: a lock that
// ignores its context's deadline must not hang the run, and nothing of it
// may outlive the run either. The zero value is ready to use.
type Abandoned struct {
	mu    sync.Mutex
	calls []<-chan struct{}
}

// Acquire calls l.Acquire with actx and waits for its answer until
// deadline (actx's, or later for a lock run as a process: see
// process.StopAllowance) and history.DeadlineWait after. A lock that has
// not answered by then ignores its context: the lab stops waiting and
// answers ErrIgnoredDeadline; the caller must not use l again (its client
// is stuck until a crash gives it a new Locker), and Wait waits for the
// call.
func (a *Abandoned) Acquire(actx context.Context, l lock.Locker, deadline time.Time) (lock.Grant, error) {
	type answer struct {
		g   lock.Grant
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		g, err := l.Acquire(actx)
		ch <- answer{g, err}
	}()
	timer := time.NewTimer(time.Until(deadline) + history.DeadlineWait)
	defer timer.Stop()
	select {
	case r := <-ch:
		return r.g, r.err
	case <-timer.C:
	}
	done := make(chan struct{})
	go func() {
		<-ch
		close(done)
	}()
	a.mu.Lock()
	a.calls = append(a.calls, done)
	a.mu.Unlock()
	return lock.Grant{}, ErrIgnoredDeadline
}

// Wait waits, until ctx ends, for the Acquire calls the lab stopped
// waiting for (their Lockers closed by now, which ends what they wait
// for): nothing of the run outlives it.
func (a *Abandoned) Wait(ctx context.Context) error {
	a.mu.Lock()
	calls := a.calls
	a.calls = nil
	a.mu.Unlock()
	for _, done := range calls {
		select {
		case <-done:
		case <-ctx.Done():
			return fmt.Errorf("an Acquire that ignored its deadline had still not returned when the run closed: %w", ctx.Err())
		}
	}
	return nil
}
