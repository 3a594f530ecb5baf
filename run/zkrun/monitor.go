package zkrun

import (
	"context"
	"errors"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/run/follow"
)

// watch is one grant the sweep follows, from its grant until its node
// leaves the ensemble (lost: its session ended; gone: something deleted
// it) or its client releases it. Its lease is the session owning the
// node; LastAlive the last look that found the node standing.
type watch struct {
	follow.Grant
	node    string
	czxid   int64     // the node's creation zxid: a node of its path made later is another
	granted time.Time // when the lock returned the grant
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
	now := time.Now()
	w := &watch{Grant: follow.Grant{Client: client, Token: g.Token, Lease: lease, LastAlive: now},
		node: g.Key, czxid: czxid, granted: now}
	e.watched.Add(w)
	return lease
}

// released stops following lease, its client's release having returned,
// and reports whether the ensemble had ended it before.
func (e *Env) released(lease int64) bool {
	return e.watched.Released(lease, func(*watch) { e.sweep(context.Background()) })
}

// sweep looks once at every grant still followed: its node first — while
// it stands, its session lives (an ephemeral node goes with its session)
// — and, for a node gone, whether its session is.
func (e *Env) sweep(ctx context.Context) {
	for _, w := range e.watched.Pending() {
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
			w.Alive(sent)
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
	alive := w.Lease == 0
	for i := 0; !alive && i < 2; i++ {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		sessions, err := e.ens.Sessions(sctx)
		cancel()
		if err != nil {
			return // no leader to say: looked at again next time
		}
		alive = alive || sessions[w.Lease]
	}
	g, held, releasing := e.Holding(w.Client)
	holds := held && g.Token == w.Token
	w.Lock()
	defer w.Unlock()
	switch {
	case w.Done:
	case !alive:
		// The grant's create was the session's latest request then: it
		// starts the session's timeout as a keep-alive does (Renewals'
		// first, never the last renewal sent; as on Redis).
		e.Histories().LeaseLost(w.Lose(e.TTLDuration(), w.granted))
	case releasing && holds:
		// the release's own hand; it says what happened
	default:
		w.Done = true
		if holds {
			e.Histories().GrantGone(w.Client, w.Token)
		}
	}
}

// gone looks again at the grant resting on lease and reports whether it
// left the ensemble (its session ended, or its node was deleted).
func (e *Env) gone(ctx context.Context, lease int64) (bool, error) {
	return e.watched.Gone(lease, func(*watch) { e.sweep(ctx) })
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
