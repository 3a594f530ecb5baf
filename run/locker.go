package run

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/lock"
)

// made is what a lock's factory came to.
type made struct {
	l   lock.Locker
	err error
}

// renew gives w a new Locker (and lease), as a client does after losing its
// session. A lock's factory takes no context, and one may block: a session
// begins with a lease grant, which on a member cut off from the quorum
// waits for the quorum (etcd's client retries it for minutes). renew waits
// for it for an operation's timeout, as long as an acquire may take; then
// it gives up with an error that is a timeout (context.DeadlineExceeded),
// and the factory is left at work. The client's next renew waits for that
// same call again rather than start another; a Locker it makes after all
// is used then, or closed with the run (see dropMaking).
func (e *Env) renew(w *worker) error {
	e.mu.Lock()
	old := w.locker
	if w.quit != nil {
		close(w.quit) // what closing it does to its grants' Lost is the lab's doing
	}
	w.quit, w.told = make(chan struct{}), nil
	if w.closed {
		old = nil // closed by a renew that gave up: a second Close could wait as long again
	}
	w.closed = true
	e.mu.Unlock()
	if old != nil {
		old.Close()
	}
	e.mu.Lock()
	ch := w.making
	if ch == nil {
		ch = make(chan made, 1)
		w.making = ch
		cli := w.cl.Etcd()
		go func() {
			l, err := e.factory(cli, "lock", e.opts)
			ch <- made{l, err}
		}()
	}
	e.mu.Unlock()
	timer := time.NewTimer(e.opTimeout)
	defer timer.Stop()
	var m made
	select {
	case m = <-ch:
	case <-timer.C:
		return fmt.Errorf("client %s: its lock was not made within %v: %w", w.name, e.opTimeout, context.DeadlineExceeded)
	}
	e.mu.Lock()
	w.making = nil
	e.mu.Unlock()
	if m.err != nil {
		return fmt.Errorf("client %s: %w", w.name, m.err)
	}
	e.mu.Lock()
	w.locker, w.held, w.born, w.closed, w.stuck = m.l, false, w.crashes, false, false
	e.mu.Unlock()
	w.cl.SetLease(m.l.Lease())
	e.learn(w)
	return nil
}

// dropMaking waits, until ctx ends, for a factory renew gave up on, once
// w's client is closed (which ends what a session's grant waits for), and
// closes the Locker it made, if any: nothing of the run outlives it. A
// factory still at work when ctx ends is named in the error.
func (e *Env) dropMaking(ctx context.Context, w *worker) error {
	e.mu.Lock()
	ch := w.making
	w.making = nil
	e.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case m := <-ch:
		if m.err == nil {
			m.l.Close()
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("client %s: its lock's factory was still at work when the run ended", w.name)
	}
}
