package etcdlock

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locklab/locklab/lock"
)

// rawElection is etcd's leader election, concurrency.Election, used as a
// lock exactly as it ships: Campaign is the acquire (it returns once the
// client leads), Resign the release, and the leader key's create revision
// the fencing token. It is the same queue as etcd's Mutex — keys
// prefix/<lease>, the oldest leads, each candidate waits for the deletion
// of the keys before its own — so it teaches the same lesson under another
// name: a leader that is paused past its lease and resumes still believes
// it leads, beside the new leader.
//
// Weaknesses, documented outcomes of the lessons that show them: Campaign
// never reads its own key after waiting, so a candidate whose lease ended
// while it waited is told it leads as soon as the keys before its own are
// gone (the "phantom leader"; etcd's Mutex has made that check since v3.5,
// etcd issue 11456); Resign resigns whatever the Election leads now, so a
// Resign retried after an ambiguous failure ends the client's newer
// leadership; and a Campaign whose first Txn failed with its answer lost
// leaves its key, as the Mutex's Lock does.
//
// Requests per uncontended acquire+release: 3 (Campaign's Txn and
// waitDeletes' first Get, Resign's Txn).
type rawElection struct {
	s *concurrency.Session
	e *concurrency.Election
}

// NewElection returns the etcd-election lock: etcd's concurrency.Election
// as it ships.
func NewElection(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	s, opts, err := session(client, opts)
	if err != nil {
		return nil, err
	}
	return &rawElection{s: s, e: concurrency.NewElection(s, opts.Prefix+name)}, nil
}

func (l *rawElection) Acquire(ctx context.Context) (lock.Grant, error) {
	if err := l.e.Campaign(ctx, ""); err != nil {
		if errors.Is(err, errLeaseNotFound) {
			return lock.Grant{}, fmt.Errorf("%w: %w", lock.ErrSessionExpired, err)
		}
		return lock.Grant{}, err
	}
	return lock.Grant{Token: l.e.Rev(), Key: l.e.Key(), Lease: int64(l.s.Lease()), Lost: l.s.Done()}, nil
}

// Release is Resign, whichever grant it is given.
func (l *rawElection) Release(ctx context.Context, _ lock.Grant) error { return l.e.Resign(ctx) }

func (l *rawElection) Lease() clientv3.LeaseID { return l.s.Lease() }

func (l *rawElection) Close() error { return closeSession(l.s) }

// election is etcd's Election made to keep the contract where it does not
// (etcd-election-retry-safe). What it adds: after Campaign returns, it
// reads the leader key once more and refuses the grant if the key is gone
// or is not the one it put (ErrSessionExpired); a Campaign that fails
// removes the key its first Txn may have put; a release of an older grant
// is refused as not held and never reaches Resign. campaign-unchecked is
// the same adapter without the re-read, a known-bad lock.
//
// Requests per uncontended acquire+release: 4 (Campaign's Txn and
// waitDeletes' first Get, the adapter's Get of the leader key, Resign's
// Txn).
type election struct {
	s *concurrency.Session
	e *concurrency.Election
	// key is the session's key among the candidates, prefix/<lease>, as
	// the Election names it: what a failed Campaign may leave behind.
	key string
	// check is whether a grant is confirmed by reading the leader key.
	check bool
	token int64 // the latest grant's token
}

// NewElectionRetrySafe returns the etcd-election-retry-safe lock: etcd's
// Election with what the contract asks for that it does not do (see
// election).
func NewElectionRetrySafe(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	return newElection(client, name, opts, true)
}

// NewCampaignUnchecked returns the campaign-unchecked known-bad lock: etcd's
// Election taken at Campaign's word, which is "you lead" even when the
// candidate's key went with its lease while it waited.
func NewCampaignUnchecked(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	return newElection(client, name, opts, false)
}

func newElection(client *clientv3.Client, name string, opts lock.Options, check bool) (lock.Locker, error) {
	s, opts, err := session(client, opts)
	if err != nil {
		return nil, err
	}
	pfx := opts.Prefix + name
	return &election{s: s, e: concurrency.NewElection(s, pfx), key: fmt.Sprintf("%s/%x", pfx, s.Lease()), check: check}, nil
}

func (l *election) Acquire(ctx context.Context) (lock.Grant, error) {
	if isExpired(l.s) {
		return lock.Grant{}, lock.ErrSessionExpired
	}
	if err := l.e.Campaign(ctx, ""); err != nil {
		// Campaign resigns when ctx ends while it waits, but not when its
		// first Txn fails (that put may have committed with its answer
		// lost) nor when its wait fails otherwise.
		return lock.Grant{}, failed(ctx, err, l.s, l.key, l.token)
	}
	key, rev := l.e.Key(), l.e.Rev()
	if l.check {
		resp, err := l.s.Client().Get(ctx, key)
		if err != nil {
			// Campaign's own clean-up on failure: leave no key behind.
			l.e.Resign(l.s.Client().Ctx())
			return lock.Grant{}, err
		}
		if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != rev {
			l.e.Resign(l.s.Client().Ctx())
			return lock.Grant{}, lock.ErrSessionExpired
		}
	}
	l.token = rev
	return lock.Grant{Token: rev, Key: key, Lease: int64(l.s.Lease()), Lost: l.s.Done()}, nil
}

// Release resigns the grant it is given. Resign deletes the leader key only
// if it still has the grant's revision; a release of an older grant is
// refused as not held and never reaches Resign.
func (l *election) Release(ctx context.Context, g lock.Grant) error {
	if g.Token != l.token || g.Key != l.e.Key() {
		return lock.ErrNotHeld
	}
	if err := l.e.Resign(ctx); err != nil {
		return err
	}
	l.token = 0
	return nil
}

func (l *election) Lease() clientv3.LeaseID { return l.s.Lease() }

func (l *election) Close() error { return closeSession(l.s) }
