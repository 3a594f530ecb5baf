package lock

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// queue is the lab's revision-queue lock: the same queue as etcd's Mutex
// (keys prefix/<lease>, the oldest holds the lock, each waiter watches only
// its predecessor), with a hand-off in about one Raft commit instead of
// 100 ms.
//
// Algorithm. One Txn reads the newest key of the queue and then puts the
// client's own key if absent: the key read is the predecessor, and if there
// is none the lock is granted at once. Otherwise the waiter watches the
// predecessor's key and its own key *from now* (no start revision, so the
// watch is synced and its events are sent as they commit), waits until etcd
// confirms both watches exist, and only then reads whether the predecessor is
// still there: a delete before that read is seen by the read, a delete after
// it by the watch, so none is missed. When the predecessor goes, one Txn reads
// the client's own key and the newest key older than it: own key gone means
// the session expired (never a grant); no older key means granted; else the
// new predecessor (one that died while queued) is waited for in turn.
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
func NewQueue(client *clientv3.Client, name string, opts Options) (Locker, error) {
	s, opts, err := session(client, opts)
	if err != nil {
		return nil, err
	}
	pfx := opts.Prefix + name + "/"
	return &queue{leased: leased{s}, pfx: pfx, key: fmt.Sprintf("%s%x", pfx, s.Lease())}, nil
}

func (q *queue) Acquire(ctx context.Context) (Grant, error) {
	if isExpired(q.s) {
		return Grant{}, ErrSessionExpired
	}
	cli := q.s.Client()
	newest := clientv3.OpGet(q.pfx, clientv3.WithLastCreate()...)
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(q.key), "=", 0)).
		Then(newest, clientv3.OpPut(q.key, "", clientv3.WithLease(q.s.Lease()))).
		Commit()
	if err != nil {
		return Grant{}, err
	}
	if !resp.Succeeded {
		return Grant{}, fmt.Errorf("lock: %s is already queued or held by this Locker", q.key)
	}
	rev := resp.Header.Revision // our put's revision: the key's create revision
	grant := q.grant(q.key, rev)
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		if err := q.wait(ctx, string(kvs[0].Key), kvs[0].CreateRevision, rev); err != nil {
			q.dequeue(rev)
			return Grant{}, err
		}
	}
	return grant, nil
}

// wait waits until every key older than rev is gone, starting with pred,
// created at predRev.
func (q *queue) wait(ctx context.Context, pred string, predRev, rev int64) error {
	cli := q.s.Client()
	for {
		if err := q.waitDelete(ctx, pred, predRev); err != nil {
			return err
		}
		resp, err := cli.Txn(ctx).Then(
			clientv3.OpGet(q.key),
			clientv3.OpGet(q.pfx, append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(rev-1))...),
		).Commit()
		if err != nil {
			return err
		}
		if len(resp.Responses[0].GetResponseRange().Kvs) == 0 {
			return ErrSessionExpired
		}
		older := resp.Responses[1].GetResponseRange().Kvs
		if len(older) == 0 {
			return nil
		}
		pred, predRev = string(older[0].Key), older[0].CreateRevision
	}
}

// waitDelete returns once the predecessor — key pred as created at predRev —
// is gone, or with ErrSessionExpired once the client's own key is. The
// revision matters: a client's key name is the same at every acquire, so the
// predecessor's name may already stand for its next place in the queue,
// behind this one.
func (q *queue) waitDelete(ctx context.Context, pred string, predRev int64) error {
	cli := q.s.Client()
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	watches := []clientv3.WatchChan{
		cli.Watch(wctx, pred, clientv3.WithCreatedNotify(), clientv3.WithFilterPut()),
		cli.Watch(wctx, q.key, clientv3.WithCreatedNotify(), clientv3.WithFilterPut()),
	}
	for _, w := range watches {
		if err := created(ctx, w); err != nil {
			return err
		}
	}
	resp, err := cli.Txn(ctx).Then(clientv3.OpGet(pred, clientv3.WithKeysOnly()), clientv3.OpGet(q.key, clientv3.WithCountOnly())).Commit()
	if err != nil {
		return err
	}
	if resp.Responses[1].GetResponseRange().Count == 0 {
		return ErrSessionExpired
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
			if len(wr.Events) > 0 {
				return nil
			}
		case wr, ok := <-watches[1]:
			if err := watchErr(ctx, wr, ok); err != nil {
				return err
			}
			if len(wr.Events) > 0 {
				return ErrSessionExpired
			}
		case <-q.s.Done():
			return ErrSessionExpired
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// created waits for a watch's creation notice.
func created(ctx context.Context, w clientv3.WatchChan) error {
	select {
	case wr, ok := <-w:
		if err := watchErr(ctx, wr, ok); err != nil {
			return err
		}
		if !wr.Created {
			return errors.New("lock: watch answered before it was created")
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func watchErr(ctx context.Context, wr clientv3.WatchResponse, ok bool) error {
	if !ok {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errors.New("lock: watch closed")
	}
	if err := wr.Err(); err != nil {
		return fmt.Errorf("lock: watch: %w", err)
	}
	return nil
}

// dequeue removes the client's key after a failed wait, if it is still the
// one this wait created. It uses its own timeout: the caller's ctx may be why
// the wait failed.
func (q *queue) dequeue(rev int64) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	q.s.Client().Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(q.key), "=", rev)).
		Then(clientv3.OpDelete(q.key)).
		Commit()
}

// releaseIfOwner deletes the grant's key only if it still has the grant's
// revision: one Txn, and a release of a lost grant cannot delete a newer one.
func releaseIfOwner(ctx context.Context, cli *clientv3.Client, g Grant) error {
	cmp, err := g.Guard()
	if err != nil {
		return ErrNotHeld
	}
	resp, err := cli.Txn(ctx).If(cmp).Then(clientv3.OpDelete(g.Key)).Commit()
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		return ErrNotHeld
	}
	return nil
}
