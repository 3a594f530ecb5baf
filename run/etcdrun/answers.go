package etcdrun

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/run"
)

// AcquireAnswerLost has client acquire the lock over a link that fails one
// way at the acquire's first write (faults.LoseAnswer, on the timeline): the
// request that writes the client's key reaches the server and takes effect
// there — the lab waits until a key of one of the client's leases, written
// after the step began, is on the server, and records that it saw so —
// then the connection breaks with the answer still held, so the client
// hears only that. A lock must clean that key up, or take it up when asked
// again: left behind under a session that lives on, it holds the lock, or
// a place in its queue, for a client that does not know it has it.
func (e *Env) AcquireAnswerLost(ctx context.Context, client string) (run.Outcome, error) {
	if e.conn(client) == nil {
		return run.Outcome{}, e.unknown(client)
	}
	_, held, _ := e.Holding(client)
	switch {
	case held:
		return run.Outcome{}, fmt.Errorf("acquire answer=lost: %s already holds the lock", client)
	case e.Pending(client):
		return run.Outcome{}, fmt.Errorf("acquire answer=lost: %s has a background step under way (await it first)", client)
	}
	before, err := e.c.Admin().Get(ctx, e.Options().Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return run.Outcome{}, fmt.Errorf("acquire answer=lost: read the cluster's revision: %w", err)
	}
	in, err := e.Fault(ctx, faults.Fault{Kind: faults.LoseAnswer, Client: client})
	if err != nil {
		return run.Outcome{}, err
	}
	out, err, uerr := run.LoseAnswer(ctx, e.Background(ctx), func(ctx context.Context) (run.Outcome, error) {
		return e.Acquire(ctx, client)
	}, func(wctx context.Context) error {
		err := poll.Until(wctx, client+"'s acquire to write its key on the server", leasePoll, func(ctx context.Context) (bool, error) {
			return e.hasKey(ctx, client, clientv3.WithMinCreateRev(before.Header.Revision+1))
		})
		if err == nil {
			e.runs.Observe(history.ObservedAcquireWritten, client, "")
		}
		return err
	}, in.Undo)
	switch {
	case err != nil:
		return run.Outcome{}, fmt.Errorf("acquire answer=lost: the server never showed a key of %s's leases under %s (a lock keeps "+
			"its keys under its prefix: lock.Options.Prefix in Go, LOCKLAB_LOCK for a lock run as a process) while the acquire, "+
			"which came to %q, went unanswered: %w",
			client, e.Options().Prefix, out, err)
	case uerr != nil:
		return run.Outcome{}, uerr
	}
	out.Effected = true
	return out, nil
}

// ReleaseAnswerLost has client release its latest grant over a link that
// fails one way: the request reaches the server and takes effect there (the
// lab waits until the grant's key is gone or replaced, and records that it
// saw so), then the connection is severed with the answer still held, so the
// client hears only that its connection broke. The lock must treat that
// release as ambiguous, and a retry of it as a release of that grant only.
func (e *Env) ReleaseAnswerLost(ctx context.Context, client string) (run.Outcome, error) {
	cn := e.conn(client)
	if cn == nil {
		return run.Outcome{}, e.unknown(client)
	}
	g, _, _ := e.Holding(client)
	e.mu.Lock()
	unwatchable := cn.unwatchable
	e.mu.Unlock()
	switch {
	case g.Key == "" || g.Token == 0:
		return run.Outcome{}, fmt.Errorf("release answer=lost: %s's grant names no key and revision to watch on the server", client)
	case unwatchable:
		return run.Outcome{}, fmt.Errorf("release answer=lost: %s's grant's token %d is not the create revision of its key %s: "+
			"the server cannot show its release", client, g.Token, g.Key)
	}
	cn.cl.CutAnswers()
	type result struct {
		out run.Outcome
		err error
	}
	done := make(chan result, 1)
	bg := e.Background(ctx)
	go func() {
		out, err := e.ReleaseGrant(bg, client, "")
		done <- result{out, err}
	}()
	wctx, cancel := context.WithTimeout(ctx, faults.DefaultWait)
	err := poll.Until(wctx, client+"'s release to take effect on the server", leasePoll, func(ctx context.Context) (bool, error) {
		stands, err := e.grantStands(ctx, g)
		return !stands, err
	})
	cancel()
	if err == nil {
		e.runs.Observe(history.ObservedReleased, client, "")
	}
	cn.cl.Sever()
	cn.cl.Heal()
	r := <-done
	if err != nil {
		return run.Outcome{}, err
	}
	out := run.Settled(r.out, r.err)
	out.Effected = true
	return out, nil
}
