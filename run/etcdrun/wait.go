package etcdrun

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/run"
)

// Start runs step for client in the background (its outcome is read with
// Await) and returns at once: the client is now doing what doing says.
func (e *Env) Start(ctx context.Context, client string, doing run.Doing, step func(context.Context, string) (run.Outcome, error)) (run.Outcome, error) {
	w, err := e.worker(client)
	if err != nil {
		return run.Outcome{}, err
	}
	return w.async.Start(e.background(ctx), client, doing, step), nil
}

// Await waits for client's background step and returns its outcome.
func (e *Env) Await(ctx context.Context, client string) (run.Outcome, error) {
	w, err := e.worker(client)
	if err != nil {
		return run.Outcome{}, err
	}
	return w.async.Await(ctx, client)
}

// WaitQueued waits until client's pending acquire is visibly waiting, the
// same way for every lock: a key under the run's prefix carries one of the
// client's leases (it is queued, or holds), or — for a lock that keeps no
// key while it waits, such as one that polls — its acquire is still pending
// after the server has answered a request of the client's since the wait
// began (it asked and was told to wait; a request merely sent may not have
// reached the server yet).
func (e *Env) WaitQueued(ctx context.Context, client string) (run.Outcome, error) {
	w, err := e.worker(client)
	if err != nil {
		return run.Outcome{}, err
	}
	answered := w.cl.Answered()
	e.mu.Lock()
	l := w.locker
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, run.QueueWait(l))
	defer cancel()
	err = poll.Until(ctx, client+" to wait for the lock", leasePoll, func(ctx context.Context) (bool, error) {
		if queued, err := e.hasKey(ctx, w, client); queued || err != nil {
			return queued, err
		}
		return w.async.Pending() && w.cl.Answered() > answered, nil
	})
	if err != nil {
		return run.Outcome{}, err
	}
	e.runs.Observe(history.ObservedQueued, client, "")
	return run.Outcome{Kind: run.Waiting, Client: client}, nil
}

// ReleaseAnswerLost has client release its latest grant over a link that
// fails one way: the request reaches the server and takes effect there (the
// lab waits until the grant's key is gone or replaced, and records that it
// saw so), then the connection is severed with the answer still held, so the
// client hears only that its connection broke. The lock must treat that
// release as ambiguous, and a retry of it as a release of that grant only.
func (e *Env) ReleaseAnswerLost(ctx context.Context, client string) (run.Outcome, error) {
	w, err := e.worker(client)
	if err != nil {
		return run.Outcome{}, err
	}
	e.mu.Lock()
	g, unwatchable := w.grant, w.unwatchable
	e.mu.Unlock()
	switch {
	case g.Key == "" || g.Token == 0:
		return run.Outcome{}, fmt.Errorf("release answer=lost: %s's grant names no key and revision to watch on the server", client)
	case unwatchable:
		return run.Outcome{}, fmt.Errorf("release answer=lost: %s's grant's token %d is not the create revision of its key %s: "+
			"the server cannot show its release", client, g.Token, g.Key)
	}
	w.cl.CutAnswers()
	type result struct {
		out run.Outcome
		err error
	}
	done := make(chan result, 1)
	bg := e.background(ctx)
	go func() {
		out, err := e.Release(bg, client)
		done <- result{out, err}
	}()
	wctx, cancel := context.WithTimeout(ctx, faults.DefaultWait)
	err = poll.Until(wctx, client+"'s release to take effect on the server", leasePoll, func(ctx context.Context) (bool, error) {
		stands, err := e.grantStands(ctx, g)
		return !stands, err
	})
	cancel()
	if err == nil {
		e.runs.Observe(history.ObservedReleased, client, "")
	}
	w.cl.Sever()
	w.cl.Heal()
	r := <-done
	if err != nil {
		return run.Outcome{}, err
	}
	out := run.Settled(r.out, r.err)
	out.Effected = true
	return out, nil
}

// leasesOf is the set of leases client has had that the server still has.
func (e *Env) leasesOf(client string) map[int64]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[int64]bool{}
	for l, c := range e.leases {
		if c == client {
			out[l] = true
		}
	}
	return out
}

// Reports checks every resource's history.
func (e *Env) Reports() ([]models.Report, error) { return e.runs.Reports(e.minimum) }

// Check checks every resource's history so far: the check step.
func (e *Env) Check() (run.Outcome, error) { return e.runs.Check(e.minimum) }
