package etcdlock

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/lock"
)

// queue is the lab's revision-queue lock: the same queue as etcd's Mutex
// (keys prefix/<lease>, the oldest holds the lock, each waiter watches only
// its predecessor), with a hand-off of one Raft commit and one linearizable
// read instead of 100 ms.
//
// Algorithm. One Txn reads the newest key of the queue and then puts the
// client's own key if absent: the key read is the predecessor, and if there
// is none the lock is granted at once. Otherwise the waiter watches the
// predecessor's key and its own key *from now* (no start revision, so the
// watch is synced and its events are sent as they commit), waits until etcd
// confirms both watches exist — each confirmation carries the revision after
// which the watch sees every event — and only then reads whether the
// predecessor is still there: a delete up to the read's revision is seen by
// the read, a later one by the watch, so none is missed. That read may be
// serializable (no quorum round) because it only decides whether to keep
// waiting; if the member that answers has not yet applied the client's own
// key or the watches' revision (a client with several endpoints may read
// from another member than it wrote to), it is read again linearizably. When the predecessor goes, one linearizable
// Txn reads the client's own key and the newest key older than it: own key
// gone means the session expired (never a grant); no older key means
// granted; else the new predecessor (one that died while queued) is waited
// for in turn. That confirmation stays linearizable: a read served by a
// lagging or cut-off member could show a key whose lease the majority has
// already ended, and grant the lock after a newer waiter got it.
//
// Token: the create revision of the client's key. Requests per uncontended
// acquire+release: 2 (Txn, Txn). Release deletes the key only if it still
// has the grant's revision, so a late release never removes a newer lock.
//
// Weaknesses: like every lease lock it cannot stop a holder that is paused
// past its lease from acting; fence what it protects.
type queue struct {
	leased
	pfx string
	key string
}

// NewQueue returns the queue lock.
func NewQueue(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	s, opts, err := session(client, opts)
	if err != nil {
		return nil, err
	}
	pfx := opts.Prefix + name + "/"
	return &queue{leased: leased{s: s}, pfx: pfx, key: fmt.Sprintf("%s%x", pfx, s.Lease())}, nil
}

func (q *queue) Acquire(ctx context.Context) (lock.Grant, error) {
	if isExpired(q.s) {
		return lock.Grant{}, lock.ErrSessionExpired
	}
	newest := clientv3.OpGet(q.pfx, clientv3.WithLastCreate()...)
	resp, err := q.s.Client().Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(q.key), "=", 0)).
		Then(newest, clientv3.OpPut(q.key, "", clientv3.WithLease(q.s.Lease()))).
		Else(clientv3.OpGet(q.key)).
		Commit()
	if err != nil {
		// The put may have committed with its answer lost.
		return lock.Grant{}, failed(ctx, err, q.s, q.key, q.granted)
	}
	var pred string
	var rev, predRev int64
	if resp.Succeeded {
		rev = resp.Header.Revision // our put's revision: the key's create revision
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			pred, predRev = string(kvs[0].Key), kvs[0].CreateRevision
		}
	} else {
		// Our key is already queued: an earlier Acquire's Txn committed but
		// its answer was lost. Take up that place in the queue.
		if rev = q.ownKey(resp); rev == 0 {
			return lock.Grant{}, fmt.Errorf("lock: %s is held by another lease", q.key)
		}
		if pred, predRev, err = q.older(ctx, rev); err != nil {
			return lock.Grant{}, failed(ctx, err, q.s, q.key, q.granted)
		}
	}
	if pred != "" {
		if err := q.wait(ctx, pred, predRev, rev); err != nil {
			return lock.Grant{}, failed(ctx, err, q.s, q.key, q.granted)
		}
	}
	return q.grant(q.key, rev), nil
}

// wait waits until every key older than rev is gone, starting with pred,
// created at predRev.
func (q *queue) wait(ctx context.Context, pred string, predRev, rev int64) error {
	for pred != "" {
		if err := q.waitDelete(ctx, pred, predRev, rev); err != nil {
			return err
		}
		var err error
		if pred, predRev, err = q.older(ctx, rev); err != nil {
			return err
		}
	}
	return nil
}

// older reads, linearizably, the client's own key (created at rev) and the
// newest key older than it: ErrSessionExpired if the own key is gone, ""
// if no older key is left (the lock is the client's), else the key to wait
// for next.
func (q *queue) older(ctx context.Context, rev int64) (string, int64, error) {
	resp, err := q.s.Client().Txn(ctx).Then(
		clientv3.OpGet(q.key),
		clientv3.OpGet(q.pfx, append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(rev-1))...),
	).Commit()
	if err != nil {
		return "", 0, err
	}
	if own := resp.Responses[0].GetResponseRange().Kvs; len(own) == 0 || own[0].CreateRevision != rev {
		return "", 0, lock.ErrSessionExpired
	}
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		return string(kvs[0].Key), kvs[0].CreateRevision, nil
	}
	return "", 0, nil
}

// waitDelete returns once the predecessor — key pred as created at predRev —
// is gone, or with ErrSessionExpired once the client's own key (created at
// rev) is. The
// revision matters: a client's key name is the same at every acquire, so the
// predecessor's name may already stand for its next place in the queue,
// behind this one.
func (q *queue) waitDelete(ctx context.Context, pred string, predRev, rev int64) error {
	cli := q.s.Client()
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	watches := []clientv3.WatchChan{
		cli.Watch(wctx, pred, clientv3.WithCreatedNotify(), clientv3.WithFilterPut()),
		cli.Watch(wctx, q.key, clientv3.WithCreatedNotify(), clientv3.WithFilterPut()),
	}
	// The read below must be at least as new as the client's own key and
	// as every watch: what it cannot see, the watches will.
	from := rev
	for _, w := range watches {
		rev, err := created(ctx, w)
		if err != nil {
			return err
		}
		from = max(from, rev)
	}
	// So a serializable read is enough if its revision is at least from.
	// (It decides only whether to keep waiting; the grant itself is
	// confirmed linearizably in wait.) A member further behind answers
	// with an older revision: read again linearizably.
	resp, err := q.check(ctx, pred, clientv3.WithSerializable())
	if err == nil && resp.Header.Revision < from {
		resp, err = q.check(ctx, pred)
	}
	if err != nil {
		return err
	}
	if resp.Responses[1].GetResponseRange().Count == 0 {
		return lock.ErrSessionExpired
	}
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 0 || kvs[0].CreateRevision != predRev {
		return nil // gone, perhaps already back under the same name
	}
	for {
		select {
		case wr, ok := <-watches[0]:
			if err := watchErr(ctx, wr, ok); err != nil {
				return err
			}
			if deletedAfter(wr, predRev) {
				return nil
			}
		case wr, ok := <-watches[1]:
			if err := watchErr(ctx, wr, ok); err != nil {
				return err
			}
			if deletedAfter(wr, rev) {
				return lock.ErrSessionExpired
			}
		case <-q.s.Done():
			return lock.ErrSessionExpired
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// deletedAfter reports whether wr holds a delete after revision rev. An
// older delete is of an earlier key of the same name (a client's key name is
// the same at every acquire): a watch created on a member that is behind the
// one the client wrote to still delivers it. (Only with a client that has
// several endpoints; found by TestQueueWithClientsOnEveryMember.)
func deletedAfter(wr clientv3.WatchResponse, rev int64) bool {
	for _, ev := range wr.Events {
		if ev.Type == clientv3.EventTypeDelete && ev.Kv.ModRevision > rev {
			return true
		}
	}
	return false
}

// check reads whether pred exists and whether the client's own key does.
func (q *queue) check(ctx context.Context, pred string, opts ...clientv3.OpOption) (*clientv3.TxnResponse, error) {
	return q.s.Client().Txn(ctx).Then(
		clientv3.OpGet(pred, append(opts, clientv3.WithKeysOnly())...),
		clientv3.OpGet(q.key, append(opts, clientv3.WithCountOnly())...),
	).Commit()
}

// created waits for a watch's creation notice and returns its revision:
// the watch receives every event after it.
func created(ctx context.Context, w clientv3.WatchChan) (int64, error) {
	select {
	case wr, ok := <-w:
		if err := watchErr(ctx, wr, ok); err != nil {
			return 0, err
		}
		if !wr.Created {
			return 0, errors.New("lock: watch answered before it was created")
		}
		return wr.Header.Revision, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// watchErr is what ended a watch, if anything did: the context first (a
// watch made with clientv3.WithRequireLeader reports its context's end as
// "no leader"), then the watch's own error.
func watchErr(ctx context.Context, wr clientv3.WatchResponse, ok bool) error {
	if ctx.Err() != nil && (!ok || wr.Err() != nil) {
		return ctx.Err()
	}
	if !ok {
		return errors.New("lock: watch closed")
	}
	if err := wr.Err(); err != nil {
		return fmt.Errorf("lock: watch: %w", err)
	}
	return nil
}

// releaseIfOwner deletes the grant's key only if it still has the grant's
// revision: one Txn, and a release of a lost grant cannot delete a newer one.
func releaseIfOwner(ctx context.Context, cli *clientv3.Client, g lock.Grant) error {
	cmp, err := Guard(g)
	if err != nil {
		return lock.ErrNotHeld
	}
	resp, err := cli.Txn(ctx).If(cmp).Then(clientv3.OpDelete(g.Key)).Commit()
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		return lock.ErrNotHeld
	}
	return nil
}
