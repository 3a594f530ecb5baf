package etcdrun

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
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
// for it for an operation's timeout, as long as an acquire may take (see
// patience); then it gives up with an error that is a timeout
// (context.DeadlineExceeded), and the factory is left at work. The client's next renew waits for that
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
	wait := e.patience()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	var m made
	select {
	case m = <-ch:
	case <-timer.C:
		return fmt.Errorf("client %s: its lock was not made within %v: %w", w.name, wait, context.DeadlineExceeded)
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
	w.cl.SetLease(saidLease(m.l))
	e.learn(w)
	return nil
}

// patience is how long renew waits for a lock's factory: an operation's
// timeout while a fault of the schedule is open (a member cut off from the
// quorum keeps a session's lease grant waiting for minutes), and
// history.DeadlineWait longer while none is: then nothing stands between
// the client and a working cluster, and a factory that is slow is slow
// through the machine's load (a lease grant is a quorum's write), which
// is not the lock's to answer for, nor a reason to end the run.
func (e *Env) patience() time.Duration {
	if len(e.nemesis.Active()) > 0 {
		return e.opTimeout
	}
	return e.opTimeout + history.DeadlineWait
}

// memberCutOff reports whether member is cut off from the quorum now: an
// isolation or a partition that leaves it on a minority side. Its clients
// still reach it, and it answers from the state it had.
func (e *Env) memberCutOff(member string) bool {
	for _, in := range e.nemesis.Active() {
		f := in.Fault()
		switch f.Kind {
		case faults.IsolateMember, faults.IsolateLeader:
			if in.Target() == member || f.Member == member {
				return true
			}
		case faults.Partition:
			for _, g := range f.Groups {
				if slices.Contains(g, member) && 2*len(g) <= len(e.c.Members()) {
					return true
				}
			}
		}
	}
	return false
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
