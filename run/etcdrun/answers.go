package etcdrun

import (
	"context"
	"fmt"
	"strings"

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
	w, err := e.worker(client)
	if err != nil {
		return run.Outcome{}, err
	}
	e.mu.Lock()
	held := w.held
	e.mu.Unlock()
	switch {
	case held:
		return run.Outcome{}, fmt.Errorf("acquire answer=lost: %s already holds the lock", client)
	case w.async.Pending():
		return run.Outcome{}, fmt.Errorf("acquire answer=lost: %s has a background step under way (await it first)", client)
	}
	before, err := e.c.Admin().Get(ctx, e.opts.Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return run.Outcome{}, fmt.Errorf("acquire answer=lost: read the cluster's revision: %w", err)
	}
	in, err := e.Fault(ctx, faults.Fault{Kind: faults.LoseAnswer, Client: client})
	if err != nil {
		return run.Outcome{}, err
	}
	out, err, uerr := run.LoseAnswer(ctx, e.background(ctx), func(ctx context.Context) (run.Outcome, error) {
		return e.Acquire(ctx, client)
	}, func(wctx context.Context) error {
		err := poll.Until(wctx, client+"'s acquire to write its key on the server", leasePoll, func(ctx context.Context) (bool, error) {
			return e.hasKey(ctx, w, client, clientv3.WithMinCreateRev(before.Header.Revision+1))
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
			client, e.opts.Prefix, out, err)
	case uerr != nil:
		return run.Outcome{}, uerr
	}
	out.Effected = true
	return out, nil
}

// hasKey reports whether a key of one of client's leases (w is its
// worker) is under the run's prefix; opts narrow the read (a key created
// after some revision).
func (e *Env) hasKey(ctx context.Context, w *worker, client string, opts ...clientv3.OpOption) (bool, error) {
	e.learn(w)
	// Not keys-only: that drops each key's lease.
	resp, err := e.c.Admin().Get(ctx, e.opts.Prefix, append(opts, clientv3.WithPrefix())...)
	if err != nil {
		return false, err
	}
	mine := e.leasesOf(client)
	for _, kv := range resp.Kvs {
		if mine[kv.Lease] {
			return true, nil
		}
	}
	return false, nil
}

// WaitFree waits until no key on a lease is left under the run's prefix:
// every key a client wrote is gone, deleted or with its lease. A lock whose
// client gave up must be free again within the bound on granting again
// after a fault (RegrantWithin): a key left to its lease goes within a TTL;
// one left under a session that lives on never goes, and the step fails
// naming it.
func (e *Env) WaitFree(ctx context.Context) (run.Outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, run.RegrantWithin(e.TTL()))
	defer cancel()
	var left []string
	err := poll.Until(ctx, "the lock to be free", leasePoll, func(ctx context.Context) (bool, error) {
		// Not keys-only: that drops each key's lease.
		resp, err := e.c.Admin().Get(ctx, e.opts.Prefix, clientv3.WithPrefix())
		if err != nil {
			return false, err
		}
		left = left[:0]
		for _, kv := range resp.Kvs {
			if kv.Lease != 0 {
				e.mu.Lock()
				owner := e.leases[kv.Lease]
				e.mu.Unlock()
				if owner != "" {
					owner += "'s "
				}
				left = append(left, fmt.Sprintf("%skey %s (lease %x)", owner, strings.TrimPrefix(string(kv.Key), e.opts.Prefix), kv.Lease))
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		return run.Outcome{}, fmt.Errorf("the lock was not free within %v: %s left: %w", run.RegrantWithin(e.TTL()), strings.Join(left, ", "), err)
	}
	return run.Outcome{Kind: run.Free}, nil
}
