package etcdrun

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
)

// made is what a lock's factory came to.
type made struct {
	l   lock.Locker
	err error
}

// makeLocker makes a new Locker (and lease) for client, as a client does
// after losing its session or starting again. A lock's factory takes no
// context, and one may block: a session begins with a lease grant, which on
// a member cut off from the quorum waits for the quorum (etcd's client
// retries it for minutes). makeLocker waits for it for an operation's
// timeout, as long as an acquire may take (see patience); then it gives up
// with an error that is a timeout (context.DeadlineExceeded), and the
// factory is left at work. The client's next makeLocker waits for that
// same call again rather than start another; a Locker it makes after all
// is used then, or closed with the run (see dropMaking). A lock run as a
// process has its client learn everything off the wire.
func (e *Env) makeLocker(client string) (lock.Locker, error) {
	e.mu.Lock()
	cn := e.conns[client]
	if cn == nil {
		e.mu.Unlock()
		return nil, e.unknown(client)
	}
	ch := cn.making
	if ch == nil {
		ch = make(chan made, 1)
		cn.making = ch
		cli := cn.cl.Etcd()
		go func() {
			l, err := e.factory(cli, "lock", e.Options())
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
		return nil, fmt.Errorf("its factory had not returned within %v: %w", wait, context.DeadlineExceeded)
	}
	e.mu.Lock()
	cn.making = nil
	if m.err == nil {
		cn.locker = m.l
	}
	e.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	if _, ok := m.l.(process.Program); ok && !cn.cl.IsWired() {
		// The lab learns a process's leases off the wire.
		cn.cl.Wired()
	}
	cn.cl.SetLease(saidLease(m.l))
	e.learn(client)
	return m.l, nil
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
		return e.OpTimeout()
	}
	return e.OpTimeout() + history.DeadlineWait
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

// dropMaking waits, until ctx ends, for a factory makeLocker gave up on,
// once client's connection is closed (which ends what a session's grant
// waits for), and closes the Locker it made, if any: nothing of the run
// outlives it. A factory still at work when ctx ends is named in the
// error.
func (e *Env) dropMaking(ctx context.Context, client string) error {
	e.mu.Lock()
	var ch chan made
	if cn := e.conns[client]; cn != nil {
		ch, cn.making = cn.making, nil
	}
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
		return fmt.Errorf("client %s: its lock's factory was still at work when the run ended", client)
	}
}
