package redisrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run"
)

// classify marks the errors that certainly changed nothing: the lock's own
// refusals.
func classify(err error) error {
	if errors.Is(err, lock.ErrNotHeld) || errors.Is(err, lock.ErrNotHeld) || errors.Is(err, lock.ErrNoToken) ||
		errors.Is(err, cluster.ErrCrashed) {
		return history.Definite(err)
	}
	return err
}

// asLab words a Redis lock's error as the lab's outcomes class it.
func asLab(err error) error {
	if errors.Is(err, lock.ErrNotHeld) {
		return errors.Join(lock.ErrNotHeld, err)
	}
	return err
}

// Acquire has client acquire the lock, recorded on every history.
func (e *Env) Acquire(ctx context.Context, name string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	ids := e.invoke(name, history.Acquire)
	c.mu.Lock()
	l, crashes := c.locker, c.crashes
	c.acquiring = true
	c.mu.Unlock()
	actx, cancel := e.lockContext(ctx, l)
	g, err := l.Acquire(actx)
	cancel()
	c.mu.Lock()
	c.acquiring = false
	crashed := c.crashes != crashes
	c.mu.Unlock()
	if crashed {
		e.complete(ids, cluster.ErrCrashed, history.Event{})
		return run.FailedOutcome(run.Failed, name, cluster.ErrCrashed), cluster.ErrCrashed
	}
	if err != nil {
		e.complete(ids, classify(err), history.Event{})
		return run.FailedOutcome(run.Failed, name, asLab(err)), err
	}
	w := e.follow(c, g)
	e.complete(ids, nil, history.Event{Token: g.Token, Lease: w.lease})
	label := e.tokens.Label(g.Token)
	c.mu.Lock()
	c.grant, c.lease, c.held = g, w.lease, true
	c.grants[label], c.leaseOf[label] = g, w.lease
	c.mu.Unlock()
	return run.Outcome{Kind: run.Granted, Client: name, Token: label, Tokenless: g.Token == 0}, nil
}

// lockContext bounds one call of l: the operation's timeout, and for a
// lock run as a process whose process is starting its start-up allowance
// besides, until it says it is up (process.WithStartup).
func (e *Env) lockContext(ctx context.Context, l lock.Locker) (context.Context, context.CancelFunc) {
	if p, ok := l.(process.Program); ok && p.Starting() {
		return process.WithStartup(ctx, e.opTimeout)
	}
	return context.WithTimeout(ctx, e.opTimeout)
}

// invoke records the start of client's op on every history.
func (e *Env) invoke(client string, op history.Op) []int {
	ids := make([]int, len(e.recs))
	for i, r := range e.recs {
		ids[i] = r.Invoke(client, op, history.Event{Lock: "lock"})
	}
	return ids
}

// complete records the end of the operations ids on every history.
func (e *Env) complete(ids []int, err error, out history.Event) {
	for i, r := range e.recs {
		r.Complete(ids[i], err, out)
	}
}

// CSWork has client run one critical section on every resource, working
// for d between its reads and its writes.
func (e *Env) CSWork(ctx context.Context, name string, d time.Duration) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	c.mu.Lock()
	held, g, crashes := c.held, lock.Grant{Token: c.grant.Token}, c.crashes
	c.mu.Unlock()
	if !held {
		return run.Outcome{Kind: run.Failed, Client: name, Failure: run.FailNoGrant},
			fmt.Errorf("%s: critical section without a grant: %w", name, lock.ErrNotHeld)
	}
	ids := make([]int, len(e.res))
	reads := make([]*int64, len(e.res))
	errs := make([]error, len(e.res))
	for i, r := range e.res {
		ids[i] = e.recs[i].Invoke(name, history.CS, history.Event{Lock: "lock"})
		v, err := r.Read(ctx, nil, g)
		if err == nil {
			reads[i] = &v
		}
		errs[i] = err
	}
	run.Work(ctx, d)
	pauseErr := c.gate.PausePoint(ctx, resource.BeforeWrite)
	c.mu.Lock()
	if c.crashes != crashes && pauseErr == nil {
		pauseErr = cluster.ErrCrashed
	}
	c.mu.Unlock()
	out := run.Outcome{Kind: run.Section, Client: name}
	for i, r := range e.res {
		ev := history.Event{Token: g.Token, Value: reads[i]}
		err := errs[i]
		if err == nil && pauseErr != nil {
			err = pauseErr
		}
		var wr resource.Written
		if err == nil {
			ev.WriteAt = max(e.recs[i].Since(time.Now()), 1)
			wr, err = r.Write(ctx, nil, g, *reads[i]+1)
		}
		if err == nil {
			ev.Accepted, ev.Reason = &wr.Accepted, wr.Reason
		}
		e.recs[i].Complete(ids[i], classify(err), ev)
		o := run.FailedOutcome(run.Section, name, err)
		out.Writes = append(out.Writes, run.Write{Resource: r.Name(), Read: reads[i], Failure: o.Failure, Detail: o.Detail, Written: wr})
	}
	return out, errors.Join(errs...)
}

// ReleaseGrant has client release the grant labelled label (t1), or its
// latest grant if label is "".
func (e *Env) ReleaseGrant(ctx context.Context, name, label string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	if err := c.gate.PausePoint(ctx, resource.BeforeRelease); err != nil {
		return run.Outcome{}, fmt.Errorf("stopped while paused: %w", err)
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
	c.releasing = true
	c.mu.Unlock()
	ids := e.invoke(name, history.Release)
	rctx, cancel := e.lockContext(ctx, l)
	err = l.Release(rctx, g)
	cancel()
	c.mu.Lock()
	if c.crashes != crashes {
		err = cluster.ErrCrashed
	}
	c.releasing = false
	if g.Value == c.grant.Value {
		c.held = false
	}
	c.mu.Unlock()
	e.complete(ids, classify(err), history.Event{Token: g.Token})
	lost := e.released(lease)
	e.checkHolders(ctx)
	if (err == nil || errors.Is(err, lock.ErrNotHeld)) && lost {
		return run.Outcome{Kind: run.ReleasedEnded, Client: name}, nil
	}
	if err != nil {
		return run.FailedOutcome(run.ReleaseFailed, name, asLab(err)), err
	}
	return run.Outcome{Kind: run.Released, Client: name}, nil
}

// Start runs step for client in the background; Await reads its outcome.
func (e *Env) Start(ctx context.Context, name string, doing run.Doing, step func(context.Context, string) (run.Outcome, error)) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	ch := make(chan run.Outcome, 1)
	c.mu.Lock()
	c.async = ch
	c.mu.Unlock()
	bg := e.background(ctx)
	go func() { ch <- run.Settled(step(bg, name)) }()
	return run.Outcome{Kind: run.Started, Client: name, Doing: doing}, nil
}

// Await waits for client's background step and returns its outcome.
func (e *Env) Await(ctx context.Context, name string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	c.mu.Lock()
	ch := c.async
	c.async = nil
	c.mu.Unlock()
	if ch == nil {
		return run.Outcome{}, fmt.Errorf("%s has no background step", name)
	}
	select {
	case out := <-ch:
		return out, nil
	case <-ctx.Done():
		return run.Outcome{}, ctx.Err()
	}
}

// WaitQueued waits until client's pending acquire is visibly waiting: a
// Redis lock keeps no queue, so it is once the server has answered one of
// the client's tries since the wait began and the acquire still pends.
func (e *Env) WaitQueued(ctx context.Context, name string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	from := c.answered.Load()
	c.mu.Lock()
	l := c.locker
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, run.QueueWait(l))
	defer cancel()
	err = poll.Until(ctx, name+"'s acquire to be told to wait", pollEvery, func(context.Context) (bool, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.acquiring && c.async == nil {
			return false, fmt.Errorf("%s is not acquiring", name)
		}
		return c.acquiring && c.answered.Load() > from, nil
	})
	if err != nil {
		return run.Outcome{}, err
	}
	e.each(func(r *history.Recorder) { r.Observe(history.ObservedQueued, name, "") })
	return run.Outcome{Kind: run.Waiting, Client: name}, nil
}

// WaitFree waits until no lock key of the run is left on the servers.
func (e *Env) WaitFree(ctx context.Context) (run.Outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, run.RegrantWithin(e.ttl))
	defer cancel()
	var left []string
	err := poll.Until(ctx, "the lock to be free", pollEvery, func(ctx context.Context) (bool, error) {
		left = left[:0]
		for _, i := range e.servers() {
			admin := e.set.Admin(i)
			if admin == nil {
				continue
			}
			n, err := admin.Exists(ctx, e.opts.Prefix+"lock").Result()
			if err != nil {
				return false, err
			}
			if n > 0 {
				left = append(left, e.Members()[i])
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		return run.Outcome{}, fmt.Errorf("the lock was not free within %v: its key is left on %v: %w", run.RegrantWithin(e.ttl), left, err)
	}
	return run.Outcome{Kind: run.Free}, nil
}
