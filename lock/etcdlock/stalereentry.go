package etcdlock

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locklab/locklab/lock"
)

// staleReentry is a single-key lock (put if absent on the session's lease,
// polled, as ttl-poll) whose key names its client, and which is re-entrant
// by that name: before it asks, it reads the key serializably — answered by
// the client's own member alone, without the quorum — and a key that names
// the client is taken for a grant the client already holds. It takes its
// session only when it must ask. The name, not the lease, says whose the
// key is, and the read may be stale: a member cut off from the quorum still
// has the key the client's lapsed lease held, which the rest of the
// cluster deleted a TTL ago and has granted to someone else since, and the
// client is told it holds the lock beside that holder (stale reads of this
// kind are why Teleport stopped reading etcd serializably). Healthy, it is
// correct: a member answers a client's write only once it has applied it,
// so the client reads its own release. Known bad: isolated-asks catches it.
type staleReentry struct {
	leased
	cli *clientv3.Client
	ttl int
	key string
	id  string
	mu  sync.Mutex // guards leased.s, which Lease reads from any goroutine
}

// NewStaleReentry returns the stale-reentry known-bad lock.
func NewStaleReentry(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	opts, err := withDefaults(opts)
	if err != nil {
		return nil, err
	}
	// The client's name: the same for every Locker made on this connection
	// (a host name, a pod name), another for every other client.
	id := fmt.Sprintf("client-%p", client)
	return &staleReentry{cli: client, ttl: opts.TTL, key: opts.Prefix + name, id: id}, nil
}

func (l *staleReentry) Acquire(ctx context.Context) (lock.Grant, error) {
	if g, ok, err := l.held(ctx); err != nil || ok {
		return g, err
	}
	if l.s == nil || isExpired(l.s) {
		if err := l.start(ctx); err != nil {
			return lock.Grant{}, err
		}
	}
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	for {
		if isExpired(l.s) {
			return lock.Grant{}, lock.ErrSessionExpired
		}
		rev, _, err := l.putIfAbsent(ctx, l.key, l.id)
		if err != nil {
			// The put may have committed with its answer lost.
			return lock.Grant{}, failed(ctx, err, l.s, l.key, l.granted)
		}
		if rev != 0 {
			return l.grant(l.key, rev), nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return lock.Grant{}, failed(ctx, ctx.Err(), l.s, l.key, l.granted)
		}
	}
}

// held is the bug: a serializable read of the key, and a key naming this
// client taken for its grant, whatever lease holds it and however stale
// the member that answered.
func (l *staleReentry) held(ctx context.Context) (lock.Grant, bool, error) {
	resp, err := l.cli.Get(ctx, l.key, clientv3.WithSerializable())
	if err != nil {
		return lock.Grant{}, false, err
	}
	if len(resp.Kvs) == 0 || string(resp.Kvs[0].Value) != l.id {
		return lock.Grant{}, false, nil
	}
	kv := resp.Kvs[0]
	return lock.Grant{Token: kv.CreateRevision, Key: l.key, Lease: kv.Lease}, true, nil
}

// start takes a session on a fresh lease, granted under ctx.
func (l *staleReentry) start(ctx context.Context) error {
	resp, err := l.cli.Grant(ctx, int64(l.ttl))
	if err != nil {
		return err
	}
	s, err := concurrency.NewSession(l.cli, concurrency.WithLease(resp.ID), concurrency.WithTTL(l.ttl))
	if err != nil {
		return err
	}
	l.mu.Lock()
	old := l.s
	l.s = s
	l.mu.Unlock()
	if old != nil {
		_ = closeSession(old)
	}
	return nil
}

func (l *staleReentry) Release(ctx context.Context, g lock.Grant) error {
	return releaseIfOwner(ctx, l.cli, g)
}

func (l *staleReentry) Lease() clientv3.LeaseID {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s == nil {
		return 0
	}
	return l.s.Lease()
}

func (l *staleReentry) Close() error {
	l.mu.Lock()
	s := l.s
	l.mu.Unlock()
	if s == nil {
		return nil
	}
	return closeSession(s)
}
