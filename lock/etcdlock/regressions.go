package etcdlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/knownbad"
)

// Regressions returns the known-bad locks, in a fixed order, a fresh
// slice each call.
func Regressions() []Regression { return slices.Clone(regressions) }

// Regression is a known-bad lock on etcd (see lock.Regression) and what
// makes it.
type Regression struct {
	lock.Regression
	// Factory makes it.
	Factory Factory
}

// regressions are the known-bad locks, in a fixed order.
var regressions = []Regression{
	{
		Regression: lock.Regression{
			Name: "etcd-11456",
			Bug: "after waiting, the lock is granted without checking that the waiter's own key (and session) still " +
				"exist: a waiter whose lease ended while it waited is told it holds the lock",
			Link:      "https://github.com/etcd-io/etcd/issues/11456",
			Scenarios: []string{"expire-while-waiting", "expire-while-waiting-lapse"}, Check: "expired-waiter",
		},
		Factory: NewWaitWithoutRecheck,
	},
	{
		Regression: lock.Regression{
			Name: "etcd-22082",
			Bug: "release deletes the lock key by name only, and is retried after an ambiguous failure: the retry " +
				"deletes the same session's newer lock, and a waiter is granted beside its holder",
			Link:      "https://github.com/etcd-io/etcd/issues/22082",
			Scenarios: []string{"retried-release"}, Check: "validity",
		},
		Factory: NewMutexUnguarded,
	},
	{
		Regression: lock.Regression{
			Name: "etcd-12017",
			Bug: "the guard a holder writes under (IsOwner: its key exists at its revision) is already true while it " +
				"waits, and the caller takes it for ownership: acquire returns once the key is queued",
			Link:      "https://github.com/etcd-io/etcd/issues/12017",
			Scenarios: []string{"contention"}, Check: "validity",
		},
		Factory: NewOwnerWhileWaiting,
	},
	{
		Regression: lock.Regression{
			Name: "set-nx-px",
			Bug: "the lease is set once, when the lock is taken, and never renewed (Redis' SET key value NX PX ttl): " +
				"a holder whose critical section outlasts the TTL loses the lock while it still works",
			Link:      "https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html",
			Scenarios: []string{"slow-holder"}, Check: "lease-kept",
		},
		Factory: NewSetNXPX,
	},
	{
		Regression: lock.Regression{
			Name: "campaign-unchecked",
			Bug: "etcd's Election taken at Campaign's word: a candidate whose lease ended while it waited is told it " +
				"leads once the keys before its own are gone, though its own key went with its lease",
			Link:      "https://github.com/etcd-io/etcd/pull/22387",
			Scenarios: []string{"expire-while-waiting", "expire-while-waiting-lapse"}, Check: "expired-waiter",
		},
		Factory: NewCampaignUnchecked,
	},
	{
		Regression: lock.Regression{
			Name: "etcd-5199",
			Bug: "each acquire queues a key of a name drawn afresh, and one that fails leaves its key queued (etcd's " +
				"Mutex before it named the key after the session): an acquire whose answer was lost holds the lock, " +
				"or a place in its queue, for nobody while its session lives, and everyone behind it waits",
			Link:      "https://github.com/etcd-io/etcd/pull/5199",
			Scenarios: []string{"lost-acquire"}, Check: "liveness",
		},
		Factory: NewFreshKey,
	},
	{
		Regression: lock.Regression{
			Name: "renew-gives-up",
			Bug: "the lock renews its own lease, and the first keep-alive that fails ends the renewing for good: a link " +
				"that fails for a moment while it holds lets its lease lapse, and the next client is granted while it " +
				"still works",
			Link:      "https://github.com/linagora/cozy-stack/pull/4911",
			Scenarios: []string{"link-blip"}, Check: "lease-kept",
		},
		Factory: NewRenewGivesUp,
	},
	{
		Regression: lock.Regression{
			Name: "renew-late",
			Bug: "the lock renews its own lease a TTL less a fiftieth after the last keep-alive's answer, not after it " +
				"was sent: on a link slow by more than a fiftieth of the TTL each way, a keep-alive arrives after the " +
				"lease has ended, and the next client is granted while it still works",
			Link:      "https://redis.io/topics/distlock",
			Scenarios: []string{"slow-link"}, Check: "lease-kept",
		},
		Factory: NewRenewLate,
	},
	{
		Regression: lock.Regression{
			Name: "stale-reentry",
			Bug: "re-entrant by the client's name, read serializably: a client whose member is cut off from the quorum " +
				"reads there the key its lapsed lease held, takes it for a grant it still holds, and is told it holds " +
				"the lock beside the holder the rest of the cluster granted it to",
			Link:      "https://github.com/gravitational/teleport/pull/16941",
			Scenarios: []string{"isolated-asks"}, Check: "validity",
		},
		Factory: NewStaleReentry,
	},
	{
		Regression: lock.Regression{
			Name: "etcd-get-del",
			Bug: "releases in two requests, a Get of the lock's key (is it still my grant?) and a Delete of the key by " +
				"name: a holder whose lease ends between the two, the key put again by the next holder, deletes that " +
				"holder's key, and a third client is granted beside the second (the check and the delete must be one " +
				"Txn: If the key's create revision is the grant's, Then delete it)",
			Link:      "https://etcd.io/docs/v3.5/learning/api/#transaction",
			Scenarios: []string{"split-release"}, Check: "validity",
		},
		Factory: NewGetDel,
	},
	withFactory(knownbad.IgnoringDeadlineRegression("ignores-deadline"), NewDeadlineIgnored),
	{
		Regression: lock.Regression{
			Name: "lost-untold",
			Bug: "the grant's Lost is a channel nothing closes (etcd's Mutex gives no word that it is no longer held, " +
				"and a Lost not taken from the session that holds the key never closes): a holder whose lease the server " +
				"ended is never told, and works on under a lock the next client now holds",
			Link:      "https://github.com/etcd-io/etcd/issues/6127",
			Scenarios: []string{"holder-told"}, Check: "told-lost",
		},
		Factory: NewLostUntold,
	},
}

// RegressionNames lists the known-bad locks in order.
func RegressionNames() []string {
	names := make([]string, len(regressions))
	for i, r := range regressions {
		names[i] = r.Name
	}
	return names
}

// LookupRegression finds a known-bad lock by name.
func LookupRegression(name string) (Regression, bool) {
	for _, r := range regressions {
		if r.Name == name {
			return r, true
		}
	}
	return Regression{}, false
}

// enqueue puts the session's key (named after its lease) in the queue, as
// etcd's Mutex does, and returns its create revision.
func (l *leased) enqueue(ctx context.Context, key string) (int64, error) {
	rev, _, err := l.putIfAbsent(ctx, key, "")
	if err == nil && rev == 0 {
		err = fmt.Errorf("lock: %s is held by another lease", key)
	}
	return rev, err
}

// waitWithoutRecheck is etcd's Mutex as it was before v3.5 (etcd issue
// 11456, found by Jepsen): it queues its key, waits until every older key
// is deleted, and returns the grant — without reading its own key again.
// If its lease ended while it waited, its key went with it, and it still
// says "granted". Known bad: expire-while-waiting catches it.
type waitWithoutRecheck struct {
	leased
	pfx, key string
}

// NewWaitWithoutRecheck returns the etcd-11456 known-bad lock.
func NewWaitWithoutRecheck(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	s, opts, err := session(client, opts)
	if err != nil {
		return nil, err
	}
	pfx := opts.Prefix + name + "/"
	return &waitWithoutRecheck{leased: leased{s: s}, pfx: pfx, key: fmt.Sprintf("%s%x", pfx, s.Lease())}, nil
}

func (l *waitWithoutRecheck) Acquire(ctx context.Context) (lock.Grant, error) {
	if isExpired(l.s) {
		return lock.Grant{}, lock.ErrSessionExpired
	}
	rev, err := l.enqueue(ctx, l.key)
	if err != nil {
		// Its one bug is elsewhere: a failed acquire leaves no key.
		return lock.Grant{}, failed(ctx, err, l.s, l.key, l.granted)
	}
	cli := l.s.Client()
	for {
		older, err := cli.Get(ctx, l.pfx, append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(rev-1))...)
		if err != nil {
			return lock.Grant{}, failed(ctx, err, l.s, l.key, l.granted)
		}
		if len(older.Kvs) == 0 {
			return l.grant(l.key, rev), nil // the bug: no look at our own key
		}
		pred := older.Kvs[0]
		wctx, cancel := context.WithCancel(ctx)
		wch := cli.Watch(wctx, string(pred.Key), clientv3.WithRev(older.Header.Revision+1), clientv3.WithFilterPut())
		err = waitDeleted(ctx, wch)
		cancel()
		if err != nil {
			return lock.Grant{}, failed(ctx, err, l.s, l.key, l.granted)
		}
	}
}

// waitDeleted returns when the watch reports a delete.
func waitDeleted(ctx context.Context, wch clientv3.WatchChan) error {
	for {
		wr, ok := <-wch
		if err := watchErr(ctx, wr, ok); err != nil {
			return err
		}
		for _, ev := range wr.Events {
			if ev.Type == clientv3.EventTypeDelete {
				return nil
			}
		}
	}
}

// ownerWhileWaiting is a caller of etcd's Mutex that writes under the
// Mutex's guard (IsOwner: "my key exists at my revision") as soon as the
// guard holds — which it does from the moment the key is queued, long
// before Lock returns (etcd issue 12017). Its acquire returns once its key
// is in the queue. Known bad: contention catches it.
type ownerWhileWaiting struct {
	leased
	key string
}

// NewOwnerWhileWaiting returns the etcd-12017 known-bad lock.
func NewOwnerWhileWaiting(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	s, opts, err := session(client, opts)
	if err != nil {
		return nil, err
	}
	return &ownerWhileWaiting{leased: leased{s: s}, key: fmt.Sprintf("%s%s/%x", opts.Prefix, name, s.Lease())}, nil
}

func (l *ownerWhileWaiting) Acquire(ctx context.Context) (lock.Grant, error) {
	if isExpired(l.s) {
		return lock.Grant{}, lock.ErrSessionExpired
	}
	rev, err := l.enqueue(ctx, l.key)
	if err != nil {
		return lock.Grant{}, failed(ctx, err, l.s, l.key, l.granted)
	}
	return l.grant(l.key, rev), nil // the bug: the guard holds, the lock is not ours yet
}

// setNXPX is Redis' `SET key value NX PX ttl` on etcd taken literally: each
// acquire takes a lease with the TTL and puts the key on it if absent,
// polling like ttl-poll — and nothing ever renews the lease. A holder that
// works longer than the TTL loses the lock without being told (Grant.Lost
// is nil: the lock cannot tell), and the next client is granted while the
// first still works. Known bad: slow-holder catches it.
type setNXPX struct {
	cli   *clientv3.Client
	ttl   int64
	key   string
	mu    sync.Mutex
	cur   clientv3.LeaseID // the lease of the latest acquire
	polls atomic.Int64
}

// NewSetNXPX returns the set-nx-px known-bad lock.
func NewSetNXPX(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	opts, err := withDefaults(opts)
	if err != nil {
		return nil, err
	}
	return &setNXPX{cli: client, ttl: int64(opts.TTL), key: opts.Prefix + name}, nil
}

func (l *setNXPX) Acquire(ctx context.Context) (lock.Grant, error) {
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	var lease clientv3.LeaseID
	for {
		if lease == 0 {
			resp, err := l.cli.Grant(ctx, l.ttl)
			if err != nil {
				return lock.Grant{}, err
			}
			lease = resp.ID
			l.mu.Lock()
			l.cur = lease
			l.mu.Unlock()
		}
		resp, err := putOnLease(ctx, l.cli, l.key, lease)
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			lease = 0 // it lapsed while we polled: take a fresh one, as the next SET would
			continue
		case err != nil:
			return lock.Grant{}, err
		case resp.Succeeded:
			return lock.Grant{Token: resp.Header.Revision, Key: l.key, Lease: int64(lease)}, nil // the bug: no keep-alive
		}
		select {
		case <-tick.C:
			l.polls.Add(1)
		case <-ctx.Done():
			return lock.Grant{}, ctx.Err()
		}
	}
}

// putOnLease puts key, naming lease, on lease if key is absent: one Txn,
// Succeeded if it was put.
func putOnLease(ctx context.Context, cli *clientv3.Client, key string, lease clientv3.LeaseID) (*clientv3.TxnResponse, error) {
	return cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, fmt.Sprintf("%x", lease), clientv3.WithLease(lease))).
		Commit()
}

// Polls is how many times Acquire has tried again after finding the lock
// taken.
func (l *setNXPX) Polls() int64 { return l.polls.Load() }

var _ lock.Poller = (*setNXPX)(nil)

func (l *setNXPX) Release(ctx context.Context, g lock.Grant) error {
	return releaseIfOwner(ctx, l.cli, g)
}

func (l *setNXPX) Lease() clientv3.LeaseID {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur
}

// Close revokes the latest lease, if it still lives.
func (l *setNXPX) Close() error {
	lease := l.Lease()
	if lease == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if _, err := l.cli.Revoke(ctx, lease); err != nil && !errors.Is(err, errLeaseNotFound) {
		return err
	}
	return nil
}

// withFactory is r, made by f.
func withFactory(r lock.Regression, f Factory) Regression {
	return Regression{Regression: r, Factory: f}
}
