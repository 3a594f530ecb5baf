package etcdrun

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
)

// grantKey is what the server had at a grant's key at the grant's
// revision: the lease the key carried (zero: not read, or none), and how
// the grant breaks lock.Grant's contract, Token being Key's create revision
// (nil: it keeps it, or the read failed — a look-up that failed proves
// nothing).
type grantKey struct {
	lease int64
	bad   *history.BadToken
	// leaseless: the key was read, and rests on no lease.
	leaseless bool
}

func (k *grantKey) leaseOrZero() int64 {
	if k == nil {
		return 0
	}
	return k.lease
}

// readGrantKey reads g's key as the server had it at g's revision; a grant
// with no key or token has nothing to read.
func (e *Env) readGrantKey(ctx context.Context, g lock.Grant) *grantKey {
	k := &grantKey{}
	if g.Key == "" || g.Token == 0 {
		return k
	}
	rctx, cancel := context.WithTimeout(ctx, e.OpTimeout())
	resp, err := e.readAt(rctx, g.Key, g.Token)
	cancel()
	switch {
	case errors.Is(err, rpctypes.ErrFutureRev):
		k.bad = &history.BadToken{Token: g.Token, Key: g.Key, Ahead: true}
	case err != nil:
	case len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != g.Token:
		k.bad = &history.BadToken{Token: g.Token, Key: g.Key}
		if len(resp.Kvs) > 0 {
			k.bad.KeyRevision = resp.Kvs[0].CreateRevision
		}
	default:
		k.lease, k.leaseless = resp.Kvs[0].Lease, resp.Kvs[0].Lease == 0
	}
	return k
}

// readAt reads key as the cluster had it at revision rev. What a revision
// holds never changes once applied, so any member that has applied rev
// answers for the cluster on its own (serializable: no round of the quorum,
// so a member cut off from it answers at once instead of holding the read
// until ctx ends); one that has not applied it yet says rev is in the
// future, and the read is asked again, of the next member the client picks
// in turn. Only when none has it does a linearizable read decide: rev is
// then past the cluster's own revision, or not.
func (e *Env) readAt(ctx context.Context, key string, rev int64) (*clientv3.GetResponse, error) {
	for range 2 * max(len(e.c.Members()), 3) {
		resp, err := e.c.Admin().Get(ctx, key, clientv3.WithRev(rev), clientv3.WithSerializable())
		if !errors.Is(err, rpctypes.ErrFutureRev) {
			return resp, err
		}
	}
	return e.c.Admin().Get(ctx, key, clientv3.WithRev(rev))
}

// checkHolders looks, after a release, at the grant of every client that
// holds the lock and is not releasing — the releasing client's own newer
// grant too, when what it released was an older one (a retried release):
// if its key is gone (or replaced) from the server while its lease is
// still alive — so no lease end removed it — and the holder still has not
// begun to release it, a release not of that grant freed it, and that is
// recorded (the validity check fails it) whatever the release answered.
// Only grants that name their key can be looked at.
func (e *Env) checkHolders(ctx context.Context) {
	var hs []holder
	for _, h := range e.Holders() {
		_, _, releasing := e.Holding(h.Client)
		g := h.Grant
		e.mu.Lock()
		cn := e.conns[h.Client]
		watchable := cn != nil && !cn.unwatchable && !e.lost[g.Lease]
		e.mu.Unlock()
		if !releasing && watchable && g.Key != "" && g.Token != 0 && g.Lease != 0 {
			hs = append(hs, holder{h.Client, g})
		}
	}
	ctx = context.WithoutCancel(ctx)
	for _, h := range hs {
		rctx, cancel := context.WithTimeout(ctx, e.OpTimeout())
		stands, err := e.grantStands(rctx, h.g)
		if err == nil && stands {
			var over bool
			over, err = e.writtenOver(rctx, h.client, h.g)
			stands = !over
		}
		cancel()
		if err != nil || stands {
			continue
		}
		if alive, err := e.c.LeaseAlive(ctx, clientv3.LeaseID(h.g.Lease)); err != nil || !alive {
			continue
		}
		g, held, releasing := e.Holding(h.client)
		if held && !releasing && g.Token == h.g.Token {
			e.runs.GrantGone(h.client, h.g.Token)
		}
	}
}

// holder is a client and the grant it holds.
type holder struct {
	client string
	g      lock.Grant
}

// grantStands reports whether g's key is still on the server as g created
// it (same create revision): no release or lease end has removed it.
func (e *Env) grantStands(ctx context.Context, g lock.Grant) (bool, error) {
	resp, err := e.c.Admin().Get(ctx, g.Key)
	if err != nil {
		return false, err
	}
	return len(resp.Kvs) > 0 && resp.Kvs[0].CreateRevision == g.Token, nil
}

// writtenOver reports whether g's key, still on the server as g created
// it, now rests on a lease that is not client's: another client put its
// own value over it (a renewal that writes the lock's key by name,
// whoever's it is). Only another client's write can do that; client's
// lease no longer keeps the key, and the lease it rests on may end while
// client holds it.
func (e *Env) writtenOver(ctx context.Context, client string, g lock.Grant) (bool, error) {
	if g.Key == "" || g.Token == 0 || g.Lease == 0 {
		return false, nil
	}
	resp, err := e.c.Admin().Get(ctx, g.Key)
	if err != nil || len(resp.Kvs) == 0 {
		return false, err
	}
	kv := resp.Kvs[0]
	return kv.CreateRevision == g.Token && kv.Lease != 0 && kv.Lease != g.Lease && !e.leasesOf(client)[kv.Lease], nil
}

// hasKey reports whether a key of one of client's leases is under the
// run's prefix; opts narrow the read (a key created after some revision).
func (e *Env) hasKey(ctx context.Context, client string, opts ...clientv3.OpOption) (bool, error) {
	e.learn(client)
	// Not keys-only: that drops each key's lease.
	resp, err := e.c.Admin().Get(ctx, e.Options().Prefix, append(opts, clientv3.WithPrefix())...)
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

// keysLeft names every key on a lease under the run's prefix, with its
// owner where the run knows it: a lock whose client gave up must leave
// none once its leases are gone (WaitFree).
func (e *Env) keysLeft(ctx context.Context) ([]string, error) {
	prefix := e.Options().Prefix
	// Not keys-only: that drops each key's lease.
	resp, err := e.c.Admin().Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	var left []string
	for _, kv := range resp.Kvs {
		if kv.Lease == 0 {
			continue
		}
		e.mu.Lock()
		owner := e.leases[kv.Lease]
		e.mu.Unlock()
		if owner != "" {
			owner += "'s "
		}
		left = append(left, fmt.Sprintf("%skey %s (lease %x)", owner, strings.TrimPrefix(string(kv.Key), prefix), kv.Lease))
	}
	return left, nil
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
