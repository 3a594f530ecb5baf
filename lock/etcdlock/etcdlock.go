package etcdlock

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locklab/locklab/lock"
)

// Factory makes a Locker on etcd: a lock.Factory of the client's own etcd
// client.
type Factory = lock.Factory[*clientv3.Client]

// A Leaser is an etcd Locker that says which lease keeps it alive, zero
// if none yet. It is optional: the lab otherwise follows the latest lease
// the client's link was granted.
type Leaser interface {
	Lease() clientv3.LeaseID
}

// Guard returns the comparison that holds only while grant g's lock key
// still exists with this grant's revision: put it in the If of a Txn to make a
// write conditional on still holding the lock (etcd's IsOwner, after Acquire).
func Guard(g lock.Grant) (clientv3.Cmp, error) {
	if g.Token == 0 || g.Key == "" {
		return clientv3.Cmp{}, lock.ErrNoToken
	}
	return clientv3.Compare(clientv3.CreateRevision(g.Key), "=", g.Token), nil
}

func withDefaults(o lock.Options) (lock.Options, error) {
	if o.TTL == 0 {
		o.TTL = lock.DefaultTTL
	}
	if o.TTL < 1 {
		return o, fmt.Errorf("%w, got %d", lock.ErrBadTTL, o.TTL)
	}
	if o.Prefix == "" {
		o.Prefix = lock.DefaultPrefix
	}
	return o, nil
}

// session checks opts and starts the lease every built-in lock keeps alive,
// the way a real client does (concurrency.Session: keep-alives every TTL/3).
func session(client *clientv3.Client, opts lock.Options) (*concurrency.Session, lock.Options, error) {
	opts, err := withDefaults(opts)
	if err != nil {
		return nil, opts, err
	}
	s, err := concurrency.NewSession(client, concurrency.WithTTL(opts.TTL))
	if err != nil {
		return nil, opts, fmt.Errorf("lock: session: %w", err)
	}
	return s, opts, nil
}

// leased is what the lab's own locks share: a session, a release that
// deletes the grant's key only if it is still the grant's, the clean-up of
// a failed acquire, and Close.
type leased struct {
	s *concurrency.Session
	// granted is the token of the latest grant handed out: abandon never
	// deletes a key of that grant or an older one.
	granted int64
}

func (l *leased) Release(ctx context.Context, g lock.Grant) error {
	return releaseIfOwner(ctx, l.s.Client(), g)
}

func (l *leased) Lease() clientv3.LeaseID { return l.s.Lease() }

func (l *leased) Close() error { return closeSession(l.s) }

// grant is a Grant of key at revision rev under this session.
func (l *leased) grant(key string, rev int64) lock.Grant {
	l.granted = rev
	return lock.Grant{Token: rev, Key: key, Lease: int64(l.s.Lease()), Lost: l.s.Done()}
}

// putIfAbsent puts key, bound to the session's lease, if it does not exist,
// in one Txn. rev is the key's create revision when the key is the
// session's — just put, or adopted from an earlier attempt whose answer was
// lost (see ownKey) — and 0 when another lease holds it; at is the Txn's
// revision (a watch for the holder's delete starts after it).
func (l *leased) putIfAbsent(ctx context.Context, key, value string) (rev, at int64, err error) {
	resp, err := l.s.Client().Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, value, clientv3.WithLease(l.s.Lease()))).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return 0, 0, err
	}
	if resp.Succeeded {
		return resp.Header.Revision, resp.Header.Revision, nil
	}
	return l.ownKey(resp), resp.Header.Revision, nil
}

// ownKey reads key after a put-if-absent found it present: if it is this
// session's — left by an earlier attempt whose outcome the client never
// learned, a Txn that committed while its response was lost — its create
// revision is returned (0 if it is someone else's or gone). Adopting it is
// what makes an acquire safe to retry, as etcd's Mutex does with the Else
// branch of its Txn; a lock that ignored it would wait behind its own key
// until its lease ended.
func (l *leased) ownKey(resp *clientv3.TxnResponse) int64 {
	for _, r := range resp.Responses {
		for _, kv := range r.GetResponseRange().GetKvs() {
			if clientv3.LeaseID(kv.Lease) == l.s.Lease() {
				return kv.CreateRevision
			}
		}
	}
	return 0
}

// abandon is the clean-up of an Acquire that returns an error: it deletes
// key if this session's lease holds it and it was put after revision after
// (the latest grant handed out, which stays). Such a key is one the failed
// Acquire may have left: its put committed while the answer was lost, or it
// was queued when ctx ended. Without this, the key stays while the session
// keeps its lease alive, and a queue behind it waits for a client that no
// longer waits. It has its own timeout: ctx may be why Acquire failed
// (why, the error it failed with) — and then a short one, lateCleanup: the
// caller's deadline has passed, and Acquire must return within a second of
// it. If the store cannot be reached, the key is left to the next Acquire,
// which takes it up (see ownKey), or to Close.
func abandon(s *concurrency.Session, key string, after int64, why error) error {
	if isExpired(s) {
		return nil // nothing renews the lease: it takes its keys within its TTL
	}
	timeout := closeTimeout
	if errors.Is(why, context.DeadlineExceeded) || errors.Is(why, context.Canceled) {
		timeout = lateCleanup
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := s.Client().Txn(ctx).If(
		clientv3.Compare(clientv3.LeaseValue(key), "=", int64(s.Lease())),
		clientv3.Compare(clientv3.CreateRevision(key), ">", after),
	).Then(clientv3.OpDelete(key)).Commit()
	return err
}

// lateCleanup bounds the clean-up of an Acquire whose context ended (see
// abandon): half the second a lock has to answer after its deadline.
const lateCleanup = closeTimeout / 4

// failed returns err, the error of a failed Acquire called with ctx,
// after abandoning key (see abandon): the context's error if ctx has
// ended, whatever the store answered meanwhile. A clean-up that fails is
// named beside it.
func failed(ctx context.Context, err error, s *concurrency.Session, key string, after int64) error {
	if errors.Is(err, lock.ErrSessionExpired) {
		return err
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		// The caller's context ended while the store was answering (a
		// request the server timed out as the deadline it was sent with
		// passed): Acquire answers with the context's error, as the
		// contract says, the store's besides.
		err = fmt.Errorf("%w (the store answered: %v)", cerr, err)
	}
	if cerr := abandon(s, key, after, err); cerr != nil {
		return fmt.Errorf("%w (and its key %s may be left until the next acquire: %v)", err, key, cerr)
	}
	return err
}

// isExpired reports whether the session's lease is known to be gone.
func isExpired(s *concurrency.Session) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}
