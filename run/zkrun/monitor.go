package zkrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/run/engine"
)

// pollEvery is how often a wait looks again (the engine sweeps as often).
const pollEvery = engine.SweepEvery

// watch is one grant the sweep follows, from its grant until its node
// leaves the ensemble (lost: its session ended; gone: something deleted
// it) or its client releases it.
type watch struct {
	client string
	node   string
	token  int64 // the grant's token
	czxid  int64 // the node's creation zxid: a node of its path made later is another
	lease  int64 // the session owning the node

	mu        sync.Mutex
	lastAlive time.Time // the last look that found the session alive
	done      bool
	lost      bool
}

// follow starts following g, client's new grant, alive when the lock
// returned it; its lease is the session owning its node.
func (e *Env) follow(client string, g lock.Grant) int64 {
	lease, czxid := g.Lease, g.Token
	if g.Key != "" {
		if ok, st, err := e.ens.Admin().Exists(g.Key); err == nil && ok {
			lease, czxid = st.EphemeralOwner, st.Czxid
		}
	}
	w := &watch{client: client, node: g.Key, token: g.Token, czxid: czxid, lease: lease, lastAlive: time.Now()}
	e.mu.Lock()
	e.watched = append(e.watched, w)
	e.mu.Unlock()
	return lease
}

// watchOf is the newest watch of lease (nil: none).
func (e *Env) watchOf(lease int64) *watch {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, w := range slices.Backward(e.watched) {
		if w.lease == lease {
			return w
		}
	}
	return nil
}

// released stops following lease, its client's release having returned,
// and reports whether the ensemble had ended it before.
func (e *Env) released(lease int64) bool {
	w := e.watchOf(lease)
	if w == nil {
		return false
	}
	e.sweep(context.Background())
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	return w.lost
}

// sweep looks once at every grant still followed: its node first — while
// it stands, its session lives (an ephemeral node goes with its session)
// — and, for a node gone, whether its session is.
func (e *Env) sweep(ctx context.Context) {
	e.mu.Lock()
	var ws []*watch
	for _, w := range e.watched {
		w.mu.Lock()
		if !w.done {
			ws = append(ws, w)
		}
		w.mu.Unlock()
	}
	e.mu.Unlock()
	for _, w := range ws {
		sent := time.Now()
		ok, st, err := e.ens.Admin().Exists(w.node)
		switch {
		case err != nil:
		case ok && st.Czxid == w.czxid:
			w.mu.Lock()
			w.lastAlive = sent
			w.mu.Unlock()
		default:
			e.left(ctx, w)
		}
	}
}

// left records how w's node left the ensemble, the first time it is seen
// gone: its session ended (the lease the grant rests on), or it was
// deleted while its session lived and its client held it and was not
// releasing it (the grant gone from the server). The leader's list of
// sessions is read twice: a session it is moving between expiry buckets
// can be missing from one reading.
func (e *Env) left(ctx context.Context, w *watch) {
	alive := false
	for range 2 {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		sessions, err := e.ens.Sessions(sctx)
		cancel()
		if err != nil {
			return // no leader to say: looked at again next time
		}
		alive = alive || sessions[w.lease]
	}
	g, held, releasing := e.Holding(w.client)
	holds := held && g.Token == w.token
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.done:
	case !alive:
		w.done, w.lost = true, true
		e.Histories().LeaseLost(history.LeaseEnd{Client: w.client, Lease: w.lease, LastAlive: w.lastAlive, TTL: e.TTLDuration()})
	case releasing && holds:
		// the release's own hand; it says what happened
	default:
		w.done = true
		if holds {
			e.Histories().GrantGone(w.client, w.token)
		}
	}
}

// WaitLeaseGone waits until the ensemble no longer has client's latest
// grant (held, or left behind by a crash): its session ended or its node
// was deleted.
func (e *Env) WaitLeaseGone(ctx context.Context, name string) (run.Outcome, error) {
	lease, err := e.LeaseOf(name)
	if err != nil {
		return run.Outcome{}, err
	}
	w := e.watchOf(lease)
	if w == nil {
		return run.Outcome{}, fmt.Errorf("%s holds no grant whose node the lab follows", name)
	}
	ctx, cancel := context.WithTimeout(ctx, faults.DefaultWait+e.TTLDuration())
	defer cancel()
	err = poll.Until(ctx, "the ensemble to end "+name+"'s session", pollEvery, func(ctx context.Context) (bool, error) {
		e.sweep(ctx)
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.done, nil
	})
	if err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.LeaseGone, Client: name}, nil
}

// WaitFree waits until no node of the run's lock is left.
func (e *Env) WaitFree(ctx context.Context) (run.Outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, run.RegrantWithin(e.TTL()))
	defer cancel()
	var left []string
	err := poll.Until(ctx, "the lock to be free", pollEvery, func(context.Context) (bool, error) {
		children, _, err := e.ens.Admin().Children(e.lockPath())
		if errors.Is(err, zk.ErrNoNode) {
			return true, nil
		}
		left = children
		return err == nil && len(children) == 0, err
	})
	if err != nil {
		return run.Outcome{}, fmt.Errorf("the lock was not free within %v: its nodes %v are left: %w", run.RegrantWithin(e.TTL()), left, err)
	}
	return run.Outcome{Kind: run.Free}, nil
}
