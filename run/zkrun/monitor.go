package zkrun

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/run"
)

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
		e.ens.Admin().Sync(g.Key) //nolint:errcheck // at worst the read below lags: the sweep syncs again
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
		if err == nil && !(ok && st.Czxid == w.czxid) {
			// The lab's own server may not have applied the create yet (a
			// follower lags the leader under load): it catches up first,
			// and is asked again.
			e.ens.Admin().Sync(w.node) //nolint:errcheck // at worst the read below lags, as before
			ok, st, err = e.ens.Admin().Exists(w.node)
		}
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
	// A node no session owns (a lock of persistent nodes) ends with no
	// session: it left by someone's delete.
	alive := w.lease == 0
	for i := 0; !alive && i < 2; i++ {
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

// gone looks again at the grant resting on lease and reports whether it
// left the ensemble (its session ended, or its node was deleted).
func (e *Env) gone(ctx context.Context, lease int64) (bool, error) {
	w := e.watchOf(lease)
	if w == nil {
		return false, errors.New("no grant whose node the lab follows")
	}
	e.sweep(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.done, nil
}

// nodesLeft names the run's lock nodes left on the ensemble.
func (e *Env) nodesLeft(context.Context) ([]string, error) {
	children, _, err := e.ens.Admin().Children(e.lockPath())
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return children, err
}

func init() {
	// go-zookeeper answers a request its broken connection cut short so.
	run.StoreErrors(run.ErrorsAre(run.FailConnectionLost, zk.ErrConnectionClosed))
}
