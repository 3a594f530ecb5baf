package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// closeTimeout bounds the cleanup Close does on its own.
const closeTimeout = 2 * time.Second

// etcdMutex is etcd's own concurrency.Mutex and Session, the baseline
// everyone uses, wrapped without changing what it does.
//
// Algorithm: one Txn puts prefix/<lease> if absent and reads the first key
// by create revision; the oldest key holds the lock. A waiter watches the key
// created just before its own, from the revision of its Get — by then a past
// revision under contention, so the watch is "unsynced" and its event arrives
// with etcd's 100 ms resync loop: about 100 ms per contended hand-off. Since
// v3.5, Lock re-reads its own key after waiting and reports ErrSessionExpired
// if it is gone (the v3.4 bug Jepsen found, etcd issue 11456).
//
// Requests per uncontended acquire+release: 2 (Txn, Delete).
//
// Weaknesses: Unlock is a plain delete of the key's name, and a session's key
// name is the same at every Lock, so an Unlock retried after an ambiguous
// failure deletes the same session's newer lock (etcd issue 22082, open).
// The adapter therefore releases only the grant it is given: a release of an
// older grant (another token) is refused as not held, and never reaches
// Unlock; etcd-22082 is the same adapter without that guard. IsOwner is true
// already while waiting (issue 12017). The token is the Mutex's own create
// revision, read from IsOwner's comparison at no extra cost.
type etcdMutex struct {
	s *concurrency.Session
	m *concurrency.Mutex
	// key is the session's key in the queue, prefix/<lease>, as the Mutex
	// names it: what a failed Lock may leave behind.
	key string
	// guard refuses the release of a grant other than the latest.
	guard bool
	token int64 // the latest grant's token
}

// NewMutex returns the etcd-mutex lock: etcd's concurrency.Mutex.
func NewMutex(client *clientv3.Client, name string, opts Options) (Locker, error) {
	return newMutex(client, name, opts, true)
}

// NewMutexUnguarded returns the etcd-22082 known-bad lock: etcd's Mutex
// whose release of any grant of the session calls Unlock, which deletes the
// session's key by name — the newer lock, if the release is a retry.
func NewMutexUnguarded(client *clientv3.Client, name string, opts Options) (Locker, error) {
	return newMutex(client, name, opts, false)
}

func newMutex(client *clientv3.Client, name string, opts Options, guard bool) (Locker, error) {
	s, opts, err := session(client, opts)
	if err != nil {
		return nil, err
	}
	pfx := opts.Prefix + name
	return &etcdMutex{s: s, m: concurrency.NewMutex(s, pfx), key: fmt.Sprintf("%s/%x", pfx, s.Lease()), guard: guard}, nil
}

func (l *etcdMutex) Acquire(ctx context.Context) (Grant, error) {
	if isExpired(l.s) {
		return Grant{}, ErrSessionExpired
	}
	if err := l.m.Lock(ctx); err != nil {
		if errors.Is(err, concurrency.ErrSessionExpired) {
			return Grant{}, ErrSessionExpired
		}
		// Lock deletes its key when its wait fails, but not when its first
		// Txn does: that put may have committed with its answer lost.
		return Grant{}, failed(err, l.s, l.key, l.token)
	}
	owner := l.m.IsOwner()
	l.token = owner.GetCompare().GetCreateRevision()
	return Grant{Token: l.token, Key: l.m.Key(), Lease: int64(l.s.Lease()), Lost: l.s.Done()}, nil
}

func (l *etcdMutex) Release(ctx context.Context, g Grant) error {
	if g.Key != l.m.Key() || (l.guard && g.Token != l.token) {
		return ErrNotHeld
	}
	if err := l.m.Unlock(ctx); err != nil {
		if errors.Is(err, concurrency.ErrLockReleased) {
			return ErrNotHeld
		}
		return err
	}
	return nil
}

func (l *etcdMutex) Lease() clientv3.LeaseID { return l.s.Lease() }

func (l *etcdMutex) Close() error { return closeSession(l.s) }

// closeSession revokes the lease (deleting every key under it) within
// closeTimeout. A lease already gone is not an error.
func closeSession(s *concurrency.Session) error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	_, err := s.Client().Revoke(ctx, s.Lease())
	s.Orphan()
	if err != nil && !isExpired(s) && !errors.Is(err, errLeaseNotFound) {
		return err
	}
	return nil
}

var errLeaseNotFound = rpctypes.ErrLeaseNotFound
