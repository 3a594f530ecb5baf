package scenarios_test

import (
	"cmp"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// rawMutex is etcd's concurrency.Mutex used as its documentation shows,
// with nothing added: when Lock's first Txn fails, the key it may have
// written stays under the session (Lock cleans up only a failed wait). Asked
// again, the same session takes the key up, so a client that retries is
// fine; one that gives up leaves the lock to a key nobody holds.
type rawMutex struct {
	s *concurrency.Session
	m *concurrency.Mutex
}

func newRawMutex(cli *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	s, err := concurrency.NewSession(cli, concurrency.WithTTL(max(opts.TTL, 1)))
	if err != nil {
		return nil, err
	}
	return &rawMutex{s: s, m: concurrency.NewMutex(s, cmp.Or(opts.Prefix, lock.DefaultPrefix)+name)}, nil
}

func (r *rawMutex) Acquire(ctx context.Context) (lock.Grant, error) {
	if err := r.m.Lock(ctx); err != nil {
		return lock.Grant{}, err
	}
	return lock.Grant{Token: r.m.Header().Revision, Key: r.m.Key(), Lease: int64(r.s.Lease()), Lost: r.s.Done()}, nil
}

func (r *rawMutex) Release(ctx context.Context, _ lock.Grant) error { return r.m.Unlock(ctx) }
func (r *rawMutex) Lease() clientv3.LeaseID                         { return r.s.Lease() }
func (r *rawMutex) Close() error                                    { return r.s.Close() }

// lost-acquire catches a lock that leaves the key of an acquire whose
// answer was lost (etcd's Mutex as it ships), though it takes the key up
// when its own client asks again: c2 gave up, and c1 waits behind c2's key
// for as long as c2's session lives. Liveness FAILs it, on every resource;
// the catalog expects PASS of a user's lock, so the run is not as expected.
func TestLostAcquireCatchesALeftKey(t *testing.T) {
	t.Parallel() // a few configurations, mostly waiting: side by side with the others
	caughtOnEveryResource(t, "lost-acquire", newRawMutex, 1, "liveness", "liveness must catch the wedge")
}

// caughtOnEveryResource runs a user's lock (factory) through scenario on
// every resource over runs seeds: every result must be FAIL, not as the
// catalog expects of a user's lock, and caught by check.
func caughtOnEveryResource(t *testing.T, scenario string, factory etcdlock.Factory, runs int, check, why string) {
	t.Helper()
	sum, err := scenarios.Run(t.Context(), scenarios.Config{
		Scenarios: []string{scenario}, Locks: []string{"users-lock"}, Resources: resource.Names(),
		Seed: 1, Runs: runs, Factories: map[string]etcdlock.Factory{"users-lock": factory},
	})
	require.NoError(t, err)
	require.Len(t, sum.Results, runs*len(resourcesOn(scenarios.DefaultKind())))
	for _, r := range sum.Results {
		assert.Equal(t, models.Fail, r.Verdict, "%s seed %d: %s", r.Resource, r.Seed, r.Error)
		assert.False(t, r.Matches)
		caught := false
		for _, v := range r.Checks {
			caught = caught || v.Check == check && v.Result == models.Fail
		}
		assert.True(t, caught, "%s seed %d: %s", r.Resource, r.Seed, why)
	}
	assert.Equal(t, 1, sum.ExitCode())
}
