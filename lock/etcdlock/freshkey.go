package etcdlock

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/lock"
)

// freshKey is etcd's Mutex as it was before etcd pull request 5199 named
// the waiter's key after its session: each Acquire queues a key of a name
// drawn afresh (here the lease and a count of attempts, there a random
// suffix), and an Acquire that fails leaves that key where it is. An
// acquire whose answer was lost has queued a key its client does not know
// of; the session keeps it alive, so it holds the lock — or a place in the
// queue — for nobody, and the client's next acquire, and every waiter's,
// waits behind it for as long as the session lives. Otherwise it is a
// correct queue lock: it grants only while its own key stands, and releases
// only the key at the grant's revision. Known bad: lost-acquire catches it.
type freshKey struct {
	leased
	pfx      string
	attempts int
}

// NewFreshKey returns the etcd-5199 known-bad lock.
func NewFreshKey(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	s, opts, err := session(client, opts)
	if err != nil {
		return nil, err
	}
	return &freshKey{leased: leased{s: s}, pfx: opts.Prefix + name + "/"}, nil
}

func (l *freshKey) Acquire(ctx context.Context) (lock.Grant, error) {
	if isExpired(l.s) {
		return lock.Grant{}, lock.ErrSessionExpired
	}
	l.attempts++
	key := fmt.Sprintf("%s%x-%d", l.pfx, l.s.Lease(), l.attempts)
	rev, err := l.enqueue(ctx, key)
	if err != nil {
		return lock.Grant{}, err // the bug: the key may stand, queued for nobody
	}
	cli := l.s.Client()
	for {
		resp, err := cli.Txn(ctx).Then(
			clientv3.OpGet(key, clientv3.WithCountOnly()),
			clientv3.OpGet(l.pfx, append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(rev-1))...),
		).Commit()
		if err != nil {
			return lock.Grant{}, err
		}
		if resp.Responses[0].GetResponseRange().Count == 0 {
			return lock.Grant{}, lock.ErrSessionExpired
		}
		older := resp.Responses[1].GetResponseRange().Kvs
		if len(older) == 0 {
			return l.grant(key, rev), nil
		}
		wctx, cancel := context.WithCancel(ctx)
		wch := cli.Watch(wctx, string(older[0].Key), clientv3.WithRev(resp.Header.Revision+1), clientv3.WithFilterPut())
		err = l.waitDeleted(ctx, wch)
		cancel()
		if err != nil {
			return lock.Grant{}, err
		}
	}
}

// waitDeleted returns when the watch reports a delete, or with
// ErrSessionExpired once the session is known to be gone.
func (l *freshKey) waitDeleted(ctx context.Context, wch clientv3.WatchChan) error {
	done := make(chan error, 1)
	go func() { done <- waitDeleted(ctx, wch) }()
	select {
	case err := <-done:
		return err
	case <-l.s.Done():
		return lock.ErrSessionExpired
	}
}
