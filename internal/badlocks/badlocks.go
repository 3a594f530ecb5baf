package badlocks

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
)

// naiveQueue is a revision queue written against the contract alone, with
// one bug chosen by its fields: the locks whose steps go otherwise than
// their scripts because of the lock.
type naiveQueue struct {
	s   *concurrency.Session
	cli *clientv3.Client
	pfx string
	// deaf: a waiter watches its predecessor for puts only, so the delete
	// that should wake it never does.
	deaf bool
	// dup: every Acquire enqueues a key of its own, even when an earlier
	// one of the client is still queued.
	dup bool
	n   atomic.Int64
}

// Deaf is a queue lock whose waiter watches its predecessor's key for
// puts only: the delete that should wake it never does, and it waits until
// its context ends — leaving its key queued, so those behind it wait too.
// The hand-off check catches it.
var Deaf etcdlock.Factory = newNaive(func(q *naiveQueue) { q.deaf = true })

// Dup is a queue lock that enqueues a key of its own at every Acquire and
// leaves it when Acquire gives up: a waiter that timed out leaves a key
// that nobody will release while its session lives, and the next waiter
// waits behind it. The hand-off check catches it.
var Dup etcdlock.Factory = newNaive(func(q *naiveQueue) { q.dup = true })

func newNaive(set func(*naiveQueue)) etcdlock.Factory {
	return func(cli *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
		if opts.TTL == 0 {
			opts.TTL = lock.DefaultTTL
		}
		if opts.Prefix == "" {
			opts.Prefix = lock.DefaultPrefix
		}
		s, err := concurrency.NewSession(cli, concurrency.WithTTL(opts.TTL))
		if err != nil {
			return nil, err
		}
		q := &naiveQueue{s: s, cli: cli, pfx: opts.Prefix + name + "/"}
		set(q)
		return q, nil
	}
}

func (q *naiveQueue) key() string {
	if q.dup {
		return fmt.Sprintf("%s%x-%d", q.pfx, q.s.Lease(), q.n.Add(1))
	}
	return fmt.Sprintf("%s%x", q.pfx, q.s.Lease())
}

func (q *naiveQueue) Acquire(ctx context.Context) (lock.Grant, error) {
	select {
	case <-q.s.Done():
		return lock.Grant{}, lock.ErrSessionExpired
	default:
	}
	key := q.key()
	put, err := q.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, "", clientv3.WithLease(q.s.Lease()))).Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return lock.Grant{}, err
	}
	rev := put.Header.Revision
	if !put.Succeeded {
		rev = put.Responses[0].GetResponseRange().Kvs[0].CreateRevision
	}
	for {
		resp, err := q.cli.Get(ctx, q.pfx, append(clientv3.WithFirstCreate(), clientv3.WithMaxCreateRev(rev))...)
		if err != nil {
			return lock.Grant{}, err
		}
		if len(resp.Kvs) == 0 {
			return lock.Grant{}, lock.ErrSessionExpired
		}
		first := resp.Kvs[0]
		if string(first.Key) == key {
			return lock.Grant{Token: rev, Key: key, Lease: int64(q.s.Lease()), Lost: q.s.Done()}, nil
		}
		wopts := []clientv3.OpOption{clientv3.WithRev(resp.Header.Revision + 1)}
		if q.deaf {
			wopts = append(wopts, clientv3.WithFilterDelete())
		}
		wctx, cancel := context.WithCancel(ctx)
		wch := q.cli.Watch(wctx, string(first.Key), wopts...)
		_, ok := <-wch
		cancel()
		if !ok || ctx.Err() != nil {
			return lock.Grant{}, errors.Join(ctx.Err(), errors.New("watch ended"))
		}
	}
}

func (q *naiveQueue) Release(ctx context.Context, g lock.Grant) error {
	_, err := q.cli.Delete(ctx, g.Key)
	return err
}

func (q *naiveQueue) Lease() clientv3.LeaseID { return q.s.Lease() }

func (q *naiveQueue) Close() error { return q.s.Close() }
