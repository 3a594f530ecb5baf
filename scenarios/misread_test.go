package scenarios_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
	_ "github.com/locklab/locklab/scenarios/redisstore" // the Redis store, for the Redis watchdog
)

// Locks with a bug of their own that users write, which the lab must judge
// (FAIL, by the check that names the bug), not take for the machine's
// doing (ERROR).

// An enqueue that gives up on a slow answer and enqueues again under a
// new key leaves its first key queued ahead of its own, for nobody: on a
// slow link (400 ms each way) its waiter waits on a free lock, and that is
// the hand-off check's FAIL, not "too little progress" nor the machine's.
func TestAnEnqueueRetriedUnderANewKeyFailsHandOff(t *testing.T) {
	t.Parallel() // mostly waiting on a slow link: side by side with the others
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Scenarios: []string{"slow-link"}, Locks: []string{"new-key"},
		Resources: []string{"fenced"}, Factories: map[string]etcdlock.Factory{"new-key": newNewKeyQueue}, Seed: 1,
		Out: t.TempDir()})
	require.NoError(t, err)
	require.Len(t, sum.Results, 1)
	r := sum.Results[0]
	if r.NotJudged() && checkOf(r, "hand-off").Result != models.Fail {
		t.Logf("not judged: the machine was too busy to hold the waiter to hand-off: %s", r.Error)
		return
	}
	assert.Equal(t, models.Fail, r.Verdict, r.Error)
	assert.Equal(t, models.Fail, checkOf(r, "hand-off").Result, "the waiter waited on a free lock: %s", r.Error)
	assert.Contains(t, checkOf(r, "hand-off").Explanation, "its link was slow")
}

// A watchdog that, finding its lease gone, puts the lock's key back on a
// new lease writes over the next holder's key: the next holder's grant
// now rests on the writer's lease, and its release finds the key
// another's. The validity check names it (the grant was gone while held),
// on every seed; never ERROR. A seed on which the machine starved a later
// holder's own keep-alives (its lease gone before the lab looked at its
// key) is run again, as TestScripts runs a script again (scenarios.
// Attempts in all).
func TestAWatchdogThatWritesOverTheNextHolderFailsValidity(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 3; seed++ {
		for attempt := 1; ; attempt++ {
			sum, err := scenarios.Run(t.Context(), scenarios.Config{Scenarios: []string{"stale-release"}, Locks: []string{"reput"},
				Factories: map[string]etcdlock.Factory{"reput": newReputEtcd}, Resources: []string{"fenced"}, Seed: seed,
				Out: t.TempDir()})
			require.NoError(t, err)
			require.Len(t, sum.Results, 1)
			r := sum.Results[0]
			if r.Verdict != models.Fail && attempt < scenarios.Attempts {
				if starved := starvedHolder(t, r); starved != "" {
					t.Logf("seed %d, attempt %d: %s; run again", seed, attempt, starved)
					continue
				}
			}
			assert.Equal(t, models.Fail, r.Verdict, "seed %d: %s", r.Seed, r.Error)
			assert.Equal(t, models.Fail, checkOf(r, "validity").Result, "seed %d: %s", r.Seed, r.Error)
			break
		}
	}
}

// starvedHolder says which holder other than c1 lost its lease in r's
// history, or "": in stale-release only c1's lease is the lesson's to end
// (the reput watchdog writes over the next holder's key, on a lease of its
// own, and leaves that holder's lease alone), so another's ending is the
// machine's doing — its keep-alives starved, or the lab stood still.
func starvedHolder(t *testing.T, r scenarios.Result) string {
	t.Helper()
	if r.History == "" {
		return ""
	}
	_, events, err := history.ReadFile(r.History)
	require.NoError(t, err)
	var others []history.Loss
	for _, l := range history.LeaseLosses(events) {
		if l.Client != "c1" {
			others = append(others, l)
		}
	}
	if why := starvedRenewer(others); why != "" {
		return why
	}
	if len(others) > 0 {
		return others[0].Client + "'s lease ended, which only the machine can do in this lesson"
	}
	return ""
}

// The same bug on Redis: a watchdog that renews with a plain SET of its
// value, whoever's the key is, writes over the next holder's; validity
// FAILs it on every seed.
func TestARedisWatchdogThatWritesOverTheNextHolderFailsValidity(t *testing.T) {
	if _, err := redisd.Find(); err != nil {
		t.Skipf("%v (apt-get install redis-server; .ci/run does)", err)
	}
	t.Parallel()
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Scenarios: []string{"stale-release"}, Locks: []string{"reput"},
		Store: "redis", StoreFactories: map[string]any{"reput": lock.Factory[[]*redis.Client](newReputWatchdog)},
		Resources: []string{"fenced"}, Seed: 1, Runs: 3, Out: t.TempDir()})
	require.NoError(t, err)
	require.Len(t, sum.Results, 3)
	for _, r := range sum.Results {
		assert.Equal(t, models.Fail, checkOf(r, "validity").Result, "seed %d: %s", r.Seed, r.Error)
		assert.Contains(t, checkOf(r, "validity").Explanation, "held another grant's value")
	}
}

// checkOf is r's verdict of the check called name.
func checkOf(r scenarios.Result, name string) models.Verdict {
	for _, v := range r.Checks {
		if v.Check == name {
			return v
		}
	}
	return models.Verdict{}
}

// newKeyQueue is a queue of keys, each waiter behind the one before its
// own, whose enqueue gives each request 500 ms and, when that passes,
// enqueues again under a new key: the first key, written all the same,
// stays queued under the live session, for nobody.
type newKeyQueue struct {
	s       *concurrency.Session
	prefix  string
	timeout time.Duration
}

func newNewKeyQueue(cli *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	ttl := max(opts.TTL, 1)
	s, err := concurrency.NewSession(cli, concurrency.WithTTL(ttl))
	if err != nil {
		return nil, err
	}
	return &newKeyQueue{s: s, prefix: opts.Prefix + name + "/", timeout: 500 * time.Millisecond}, nil
}

func (q *newKeyQueue) Acquire(ctx context.Context) (lock.Grant, error) {
	key, rev, err := q.enqueue(ctx)
	if err != nil {
		return lock.Grant{}, err
	}
	for {
		resp, err := q.s.Client().Get(ctx, q.prefix, clientv3.WithFirstCreate()...)
		if err != nil {
			return lock.Grant{}, err
		}
		if len(resp.Kvs) > 0 && string(resp.Kvs[0].Key) == key {
			return lock.Grant{Key: key, Token: rev, Lease: int64(q.s.Lease())}, nil
		}
		w := q.s.Client().Watch(clientv3.WithRequireLeader(ctx), q.prefix, clientv3.WithPrefix(), clientv3.WithFilterPut(),
			clientv3.WithRev(resp.Header.Revision+1))
		select {
		case <-w:
		case <-q.s.Done():
			return lock.Grant{}, lock.ErrSessionExpired
		case <-ctx.Done():
			return lock.Grant{}, ctx.Err()
		}
	}
}

// enqueue puts a key of a name drawn afresh, trying again under another
// name when a put's 500 ms pass (the bug: the first may have been
// written).
func (q *newKeyQueue) enqueue(ctx context.Context) (string, int64, error) {
	for {
		var b [8]byte
		rand.Read(b[:]) //nolint:errcheck // never fails
		key := q.prefix + hex.EncodeToString(b[:])
		pctx, cancel := context.WithTimeout(ctx, q.timeout)
		resp, err := q.s.Client().Put(pctx, key, "", clientv3.WithLease(q.s.Lease()))
		cancel()
		if err == nil {
			return key, resp.Header.Revision, nil
		}
		if ctx.Err() != nil {
			return "", 0, fmt.Errorf("enqueue: %w", ctx.Err())
		}
	}
}

func (q *newKeyQueue) Release(ctx context.Context, g lock.Grant) error {
	return releaseByRevision(ctx, q.s.Client(), g)
}

func (q *newKeyQueue) Close() error { return q.s.Close() }

// reputWatchdog is a Redis lock whose watchdog renews its key with a plain
// SET of its own value (the bug: not only while the key still holds it),
// and runs a last round as it releases: a holder that was paused past the
// key's expiry puts its key back over the next holder's when it resumes,
// and its release then deletes it.
type reputWatchdog struct {
	c    *redis.Client
	key  string
	ttl  time.Duration
	stop func()
}

func newReputWatchdog(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	return &reputWatchdog{c: servers[0], key: opts.Prefix + name, ttl: time.Duration(max(opts.TTL, 1)) * time.Second}, nil
}

func (l *reputWatchdog) Acquire(ctx context.Context) (lock.Grant, error) {
	var b [8]byte
	rand.Read(b[:]) //nolint:errcheck // never fails
	value := hex.EncodeToString(b[:])
	for {
		ok, err := l.c.SetNX(ctx, l.key, value, l.ttl).Result()
		if err == nil && ok {
			token, err := l.c.Incr(ctx, l.key+":token").Result()
			if err != nil {
				return lock.Grant{}, err
			}
			l.watch(value)
			return lock.Grant{Key: l.key, Value: value, Token: token}, nil
		}
		select {
		case <-ctx.Done():
			return lock.Grant{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// watch re-puts the key every TTL/3 until Release.
func (l *reputWatchdog) watch(value string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(l.ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			l.c.Set(ctx, l.key, value, l.ttl) // the bug
		}
	}()
	l.stop = func() { cancel(); <-done }
}

func (l *reputWatchdog) Release(ctx context.Context, g lock.Grant) error {
	l.c.Set(ctx, l.key, g.Value, l.ttl) //nolint:errcheck // a last round of the watchdog's, as it lets go: the bug
	if l.stop != nil {
		l.stop()
		l.stop = nil
	}
	n, err := redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`).
		Run(ctx, l.c, []string{g.Key}, g.Value).Int64()
	switch {
	case err != nil:
		return err
	case n == 0:
		return lock.ErrNotHeld
	}
	return nil
}

func (l *reputWatchdog) Close() error {
	if l.stop != nil {
		l.stop()
	}
	return nil
}

// Each store's guarded resource runs for its store's locks only: a run of
// an etcd and a Redis lock naming both guards etcd's with etcd-guarded and
// Redis's with redis-guarded, and says, once per store, what it left out.
func TestAStoresGuardedResourceRunsForItsLocks(t *testing.T) {
	if _, err := redisd.Find(); err != nil {
		t.Skipf("%v (apt-get install redis-server; .ci/run does)", err)
	}
	t.Parallel()
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Scenarios: []string{"paused-holder"},
		Locks: []string{"queue", "redis-setnx"}, Resources: []string{"etcd-guarded", "redis-guarded"}, Seed: 1})
	require.NoError(t, err)
	var ran []string
	for _, r := range sum.Results {
		ran = append(ran, r.Lock+" "+r.Resource)
		if !r.NotJudged() {
			assert.Equal(t, models.Pass, r.Verdict, "%s × %s: %s", r.Lock, r.Resource, r.Error)
		}
	}
	assert.ElementsMatch(t, []string{"queue etcd-guarded", "redis-setnx redis-guarded"}, ran)
	require.NotNil(t, sum.Campaign)
	assert.Equal(t, []string{
		"redis-guarded guards a write with the lock's key in one Redis primary: a lock on etcd keeps none there, not run for queue",
		"etcd-guarded guards a write with the lock's key in etcd: a lock on one Redis primary keeps none there, not run for redis-setnx",
	}, sum.Campaign.LeftOut)
}

// reputEtcd is an etcd lock whose watchdog, when its lease is gone, takes
// a new lease and puts the lock's key back on it, whoever's the key is now
// (the bug); its release runs a round of the watchdog first, as a lock
// that makes sure of its lease before it lets go does. A holder paused past
// its lease puts its key over the next holder's as it releases, and its
// release, guarded by its own revision, then finds the key another's.
type reputEtcd struct {
	cli   *clientv3.Client
	key   string
	ttl   int64
	lease clientv3.LeaseID
}

func newReputEtcd(cli *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	return &reputEtcd{cli: cli, key: opts.Prefix + name, ttl: int64(max(opts.TTL, 1))}, nil
}

func (l *reputEtcd) Acquire(ctx context.Context) (lock.Grant, error) {
	lease, err := l.cli.Grant(ctx, l.ttl)
	if err != nil {
		return lock.Grant{}, err
	}
	for {
		resp, err := l.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(l.key), "=", 0)).
			Then(clientv3.OpPut(l.key, "", clientv3.WithLease(lease.ID))).Commit()
		if err != nil {
			return lock.Grant{}, err
		}
		if resp.Succeeded {
			l.lease = lease.ID
			return lock.Grant{Key: l.key, Token: resp.Header.Revision, Lease: int64(lease.ID)}, nil
		}
		if _, err := l.cli.KeepAliveOnce(ctx, lease.ID); err != nil {
			return lock.Grant{}, err
		}
		w := l.cli.Watch(clientv3.WithRequireLeader(ctx), l.key, clientv3.WithFilterPut(), clientv3.WithRev(resp.Header.Revision+1))
		select {
		case <-w:
		case <-time.After(time.Duration(l.ttl) * time.Second / 3):
		case <-ctx.Done():
			return lock.Grant{}, ctx.Err()
		}
	}
}

// watchdog renews the lease once, and puts the key back on a new lease
// when the old one is gone (the bug: whoever's the key is).
func (l *reputEtcd) watchdog(ctx context.Context) {
	if _, err := l.cli.KeepAliveOnce(ctx, l.lease); !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return
	}
	if g, err := l.cli.Grant(ctx, l.ttl); err == nil {
		l.lease = g.ID
		l.cli.Put(ctx, l.key, "", clientv3.WithLease(g.ID)) //nolint:errcheck // the bug
	}
}

func (l *reputEtcd) Release(ctx context.Context, g lock.Grant) error {
	l.watchdog(ctx)
	return releaseByRevision(ctx, l.cli, g)
}

func (l *reputEtcd) Close() error { return nil }

// releaseByRevision deletes g's key only while it is the one g created.
func releaseByRevision(ctx context.Context, cli *clientv3.Client, g lock.Grant) error {
	resp, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(g.Key), "=", g.Token)).
		Then(clientv3.OpDelete(g.Key)).Commit()
	switch {
	case err != nil:
		return err
	case !resp.Succeeded:
		return lock.ErrNotHeld
	}
	return nil
}
