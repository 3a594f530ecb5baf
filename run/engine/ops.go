package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/pausegate"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run"
)

// pollEvery is how often a wait looks at what it waits for.
const pollEvery = 20 * time.Millisecond

// ErrStopped marks a step that never ran: its context ended while the
// client was paused before it.
var ErrStopped = errors.New("stopped while paused")

// asLab words a lock's error as the lab's outcomes class it.
func asLab(err error) error {
	if errors.Is(err, lock.ErrNotHeld) {
		return errors.Join(lock.ErrNotHeld, err)
	}
	return err
}

// Acquire has client acquire the lock, recorded on every history. Under a
// pause at in-acquire, the client stops after the acquire's first write,
// or once the acquire is recorded if it asked nothing more (split.go).
func (e *Engine) Acquire(ctx context.Context, name string) (run.Outcome, error) {
	c, err := e.ready(name)
	if err != nil {
		return run.Outcome{}, err
	}
	if c.splitting(resource.InAcquire) {
		defer c.endSplit(ctx, resource.InAcquire)
	}
	return e.acquire(ctx, c, name)
}

// acquire is Acquire, once client c is ready.
func (e *Engine) acquire(ctx context.Context, c *client, name string) (run.Outcome, error) {
	if ss, ok := e.store.(SessionStore); ok && ss.Prepare(ctx, name) {
		if err := e.renew(c); err != nil {
			// It could not make a session: that is its ask's answer.
			ids := e.hs.Invoke(name, history.Acquire, time.Time{})
			e.hs.Complete(ids, history.Definite(err), history.Event{})
			return run.FailedOutcome(run.Failed, name, err), err
		}
	}
	c.mu.Lock()
	l, crashes := c.locker, c.crashes
	c.acquiring, c.endedWaiting = true, 0
	c.mu.Unlock()
	actx, cancel := e.lockContext(ctx, l)
	deadline, _ := actx.Deadline()
	if _, ok := l.(process.Program); ok {
		deadline = deadline.Add(process.StopAllowance) // the time it takes to stop the process
	}
	ids := e.hs.Invoke(name, history.Acquire, deadline)
	g, err := e.abandoned.Acquire(actx, l, deadline)
	cancel()
	c.mu.Lock()
	c.stuck = c.stuck || errors.Is(err, run.ErrIgnoredDeadline)
	ended := c.endedWaiting
	c.acquiring, c.endedWaiting = false, 0
	crashed := c.crashes != crashes
	c.mu.Unlock()
	if crashed {
		// Whatever the lock said, nobody was left to hear it.
		e.hs.Complete(ids, pausegate.ErrCrashed, history.Event{})
		return run.FailedOutcome(run.Failed, name, pausegate.ErrCrashed), pausegate.ErrCrashed
	}
	if err != nil && ended != 0 && !errors.Is(err, lock.ErrSessionExpired) {
		// The store ended the session the client waited on: whatever the
		// lock says of it (a connection that broke on the way), the
		// waiter was told it was not granted on a session that is gone.
		err = errors.Join(lock.ErrSessionExpired, err)
	}
	if err != nil {
		e.hs.Complete(ids, run.Classify(err), history.Event{})
		expired, rerr := e.failed(ctx, c, Failure{Err: err})
		if expired && !errors.Is(err, lock.ErrSessionExpired) {
			err = errors.Join(lock.ErrSessionExpired, err)
		}
		return run.FailedOutcome(run.Failed, name, asLab(err)), errors.Join(err, rerr)
	}
	lease, renewed := e.store.Follow(name, g)
	g.Lease = lease
	e.hs.Complete(ids, nil, history.Event{Token: g.Token, Lease: lease, Key: g.Key, Tells: g.Lost != nil})
	if gc, ok := e.store.(GrantChecker); ok {
		// After the completion, so the grant is recorded when the lock
		// returned it.
		gc.Granted(ctx, name, g)
	}
	e.followLost(c, g)
	label := e.tokens.Label(g.Token)
	c.mu.Lock()
	c.grant, c.lease, c.held = g, lease, true
	c.grants[label], c.leaseOf[label] = g, lease
	if renewed != nil && g.Value != "" {
		c.notes[g.Value] = renewed
	}
	c.mu.Unlock()
	// A lock that takes a new session after the store ended the one it
	// waited on is granted on that: the grant rests on the new one.
	renewedLease := ended != 0 && lease != 0 && lease != ended
	return run.Outcome{Kind: run.Granted, Client: name, Token: label, Tokenless: g.Token == 0, NewLease: renewedLease}, nil
}

// failed tells a SessionStore of c's step that failed, and makes c's lock
// anew if it says so; expired says the store ended c's session.
func (e *Engine) failed(ctx context.Context, c *client, f Failure) (expired bool, err error) {
	ss, ok := e.store.(SessionStore)
	if !ok {
		return false, nil
	}
	expired, renew := ss.Failed(context.WithoutCancel(ctx), c.name, f)
	if renew {
		err = e.renew(c)
	}
	return expired, err
}

// lockContext bounds one call of l: the operation's timeout, and for a
// lock run as a process whose process is starting its start-up allowance
// besides, until it says it is up (process.WithStartup).
func (e *Engine) lockContext(ctx context.Context, l lock.Locker) (context.Context, context.CancelFunc) {
	if p, ok := l.(process.Program); ok && p.Starting() {
		return process.WithStartup(ctx, e.opTimeout)
	}
	return context.WithTimeout(ctx, e.opTimeout)
}

// CSWork has client run one critical section on every resource, working
// for d between its reads and its writes (see run.CriticalSection).
func (e *Engine) CSWork(ctx context.Context, name string, d time.Duration) (run.Outcome, error) {
	c, err := e.ready(name)
	if err != nil {
		return run.Outcome{}, err
	}
	c.mu.Lock()
	held, g, crashes := c.held, c.grant, c.crashes
	c.mu.Unlock()
	if !held {
		return run.Outcome{Kind: run.Failed, Client: name, Failure: run.FailNoGrant},
			fmt.Errorf("%s: critical section without a grant: %w", name, lock.ErrNotHeld)
	}
	var conn resource.Conn
	if es, ok := e.store.(ConnStore); ok {
		conn = es.Conn(name)
	}
	return run.CriticalSection(ctx, e.hs, run.InSection{Client: name, Grant: g, Conn: conn, Work: d, OpTimeout: e.opTimeout,
		PausePoint: func(ctx context.Context) error {
			err := c.gate.PausePoint(ctx, resource.BeforeWrite)
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.crashes != crashes && err == nil {
				err = pausegate.ErrCrashed
			}
			return err
		}})
}

// ReleaseGrant has client release the grant labelled label (t1), or its
// latest grant if label is "".
func (e *Engine) ReleaseGrant(ctx context.Context, name, label string) (run.Outcome, error) {
	c, err := e.ready(name)
	if err != nil {
		return run.Outcome{}, err
	}
	if err := c.gate.PausePoint(ctx, resource.BeforeRelease); err != nil {
		return run.Outcome{}, fmt.Errorf("%w: %w", ErrStopped, err)
	}
	c.mu.Lock()
	g, lease, l, crashes := c.grant, c.lease, c.locker, c.crashes
	if label != "" {
		old, ok := c.grants[label]
		if !ok {
			c.mu.Unlock()
			return run.Outcome{}, fmt.Errorf("%s was never granted %s", name, label)
		}
		g, lease = old, c.leaseOf[label]
	}
	c.mu.Unlock()
	ss, sessions := e.store.(SessionStore)
	if sessions {
		ss.Releasing(ctx, name, g, lease)
	}
	c.mu.Lock()
	c.releasing = true
	c.mu.Unlock()
	ids := e.hs.Invoke(name, history.Release, time.Time{})
	rctx, cancel := e.lockContext(ctx, l)
	split := c.splitting(resource.InRelease)
	err = l.Release(rctx, g)
	cancel()
	c.mu.Lock()
	if c.crashes != crashes {
		err = pausegate.ErrCrashed // nobody was left to hear the answer
	}
	// Holding ends when the release returns, whatever it answered, in the
	// same step as releasing: no moment shows the grant held and not being
	// released once it may be gone by the client's own hand.
	c.releasing = false
	latest := g.Value == c.grant.Value && g.Token == c.grant.Token
	if latest {
		c.held = false
	}
	c.mu.Unlock()
	e.hs.Complete(ids, run.Classify(err), history.Event{Token: g.Token})
	if rc, ok := e.store.(ReleaseChecker); ok && err == nil && !e.releaseKept.Load() {
		// The first release that freed nothing is the finding: the rest
		// of the run is not slowed down asking again.
		if kept, kerr := rc.Kept(context.WithoutCancel(ctx), name, lease, g); kerr == nil && kept {
			e.releaseKept.Store(true)
			e.hs.ReleaseKept(name, g.Token)
		}
	}
	lost := e.store.Released(lease)
	e.store.Settle(context.WithoutCancel(ctx))
	if split {
		c.endSplit(ctx, resource.InRelease)
	}
	if (err == nil || errors.Is(err, lock.ErrNotHeld)) && lost {
		return run.Outcome{Kind: run.ReleasedEnded, Client: name}, nil
	}
	if err != nil {
		expired, rerr := e.failed(ctx, c, Failure{Err: err, Release: true, Latest: latest, Lease: lease, Grant: g})
		if expired && !errors.Is(err, lock.ErrNotHeld) && !errors.Is(err, lock.ErrSessionExpired) {
			err = errors.Join(lock.ErrSessionExpired, err)
		}
		return run.FailedOutcome(run.ReleaseFailed, name, asLab(err)), errors.Join(err, rerr)
	}
	return run.Outcome{Kind: run.Released, Client: name}, nil
}

// Start runs step for client in the background; Await reads its outcome.
func (e *Engine) Start(ctx context.Context, name string, doing run.Doing, step func(context.Context, string) (run.Outcome, error)) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	return c.async.Start(e.background(ctx), name, doing, step), nil
}

// Await waits for client's background step and returns its outcome.
func (e *Engine) Await(ctx context.Context, name string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	return c.async.Await(ctx, name)
}

// WaitQueued waits until client's pending acquire is visibly waiting: a
// WaiterShower store shows it (its key is written), or the store has
// answered one of the client's requests since the wait began and the
// acquire still pends (a request merely sent may not have reached the
// store yet), and, on a Queueing store, the store shows it waiting (or,
// for a waiter it never shows, a TTL has passed since that answer). A lock
// that polls keeps no key: the answer is what shows it.
func (e *Engine) WaitQueued(ctx context.Context, name string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	answers := c.answered.Load
	if ac, ok := e.store.(AnswerCounter); ok {
		answers = func() int64 { return ac.Answered(name) }
	}
	from := answers()
	c.mu.Lock()
	l, acquiring := c.locker, c.acquiring
	c.mu.Unlock()
	if !acquiring && !c.async.Pending() {
		return run.Outcome{}, fmt.Errorf("%s is not acquiring", name)
	}
	ctx, cancel := context.WithTimeout(ctx, run.QueueWait(l))
	defer cancel()
	q, _ := e.store.(Queueing)
	shower, _ := e.store.(WaiterShower)
	var told time.Time // when the store first answered the pending acquire
	err = poll.Until(ctx, name+"'s acquire to be told to wait", pollEvery, func(ctx context.Context) (bool, error) {
		if shower != nil {
			if shown, err := shower.Shows(ctx, name); shown || err != nil {
				return shown, err
			}
		}
		c.mu.Lock()
		answered := c.acquiring && answers() > from
		c.mu.Unlock()
		if !answered || q == nil {
			return answered, nil
		}
		if told.IsZero() {
			told = time.Now()
		}
		if queued, err := q.Queued(ctx, name); queued || err != nil {
			return queued, err
		}
		// A waiter that waits some other way than the store tells (one
		// that polls sets no watch) is taken at its answer a TTL on: the
		// lab does not hold it to how the lab's own locks wait.
		return time.Since(told) >= e.TTLDuration(), nil
	})
	if err != nil {
		return run.Outcome{}, err
	}
	e.hs.Observe(history.ObservedQueued, name, "")
	return run.Outcome{Kind: run.Waiting, Client: name}, nil
}

// WaitAnswered waits, client after client in the order they were added,
// until each has been answered on any of its links since the wait came to
// it: each is served again, by whichever server it reaches, after a fault
// that broke its connections.
func (e *Engine) WaitAnswered(ctx context.Context) error {
	e.mu.Lock()
	cs := make([]*client, 0, len(e.order))
	for _, name := range e.order {
		cs = append(cs, e.clients[name])
	}
	e.mu.Unlock()
	for _, c := range cs {
		from := c.answered.Load()
		err := poll.Until(ctx, c.name+" to be answered again", pollEvery, func(context.Context) (bool, error) {
			return c.answered.Load() > from, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// WaitLeaseGone waits until the store no longer has client's latest grant
// (held, or left behind by a crash): its lease ended or it was removed.
func (e *Engine) WaitLeaseGone(ctx context.Context, name string) (run.Outcome, error) {
	lease, err := e.LeaseOf(name)
	if err != nil {
		return run.Outcome{}, err
	}
	if _, err := e.store.Gone(ctx, lease); err != nil {
		return run.Outcome{}, fmt.Errorf("%s: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, faults.DefaultWait+e.TTLDuration())
	defer cancel()
	err = poll.Until(ctx, "the store to end "+name+"'s grant", pollEvery, func(ctx context.Context) (bool, error) {
		return e.store.Gone(ctx, lease)
	})
	if err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.LeaseGone, Client: name}, nil
}

// WaitFree waits until nothing of the run's lock is left on the store.
func (e *Engine) WaitFree(ctx context.Context) (run.Outcome, error) {
	within := run.RegrantWithin(e.TTL())
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var left []string
	err := poll.Until(ctx, "the lock to be free", pollEvery, func(ctx context.Context) (bool, error) {
		l, err := e.store.Left(ctx)
		if err == nil {
			left = l
		}
		return err == nil && len(l) == 0, err
	})
	if err != nil {
		return run.Outcome{}, fmt.Errorf("the lock was not free within %v: %s left: %w", within, strings.Join(left, ", "), err)
	}
	return run.Outcome{Kind: run.Free}, nil
}
