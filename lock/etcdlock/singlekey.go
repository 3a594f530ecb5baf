package etcdlock

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/lock"
)

// singleKeyWatch is the herd-prone design many first locks use: one key, put
// if absent with a lease; every waiter watches that same key (from the
// revision after its failed put, so no delete is missed) and, when it is
// deleted, all of them race to put it again.
//
// Token: the key's create revision. Requests per uncontended acquire+release:
// 2 (Txn, Txn).
//
// Weaknesses: the thundering herd — every release wakes every waiter, and all
// but one of their Txns fail; no fairness; its catch-up watches are
// "unsynced" under load, so each wake-up waits for etcd's 100 ms resync.
type singleKeyWatch struct {
	leased
	key string
}

// NewSingleKeyWatch returns the single-key-watch lock.
func NewSingleKeyWatch(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	s, opts, err := session(client, opts)
	if err != nil {
		return nil, err
	}
	return &singleKeyWatch{leased: leased{s: s}, key: opts.Prefix + name}, nil
}

func (l *singleKeyWatch) Acquire(ctx context.Context) (lock.Grant, error) {
	for {
		if isExpired(l.s) {
			return lock.Grant{}, lock.ErrSessionExpired
		}
		rev, at, err := l.putIfAbsent(ctx, l.key, "")
		if err != nil {
			// The put may have committed with its answer lost.
			return lock.Grant{}, failed(ctx, err, l.s, l.key, l.granted)
		}
		if rev != 0 {
			return l.grant(l.key, rev), nil
		}
		if err := l.waitDelete(ctx, at+1); err != nil {
			return lock.Grant{}, err
		}
	}
}

// waitDelete waits for the key's next delete at or after rev.
func (l *singleKeyWatch) waitDelete(ctx context.Context, rev int64) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	w := l.s.Client().Watch(wctx, l.key, clientv3.WithRev(rev), clientv3.WithFilterPut())
	for {
		select {
		case wr, ok := <-w:
			if err := watchErr(ctx, wr, ok); err != nil {
				return err
			}
			if len(wr.Events) > 0 {
				return nil
			}
		case <-l.s.Done():
			return lock.ErrSessionExpired
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
