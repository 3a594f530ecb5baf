package scenarios_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/internal/testsize"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/redislock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// Every known-bad lock is caught by its scenario on every resource, by the
// check it names, on every seed (1 here — a seed runs every resource —
// and 20 with LOCKLAB_LONG=1): a change that lets one pass has cost the
// lab its power to detect.
func TestRegressionsAreCaught(t *testing.T) {
	t.Parallel()
	seeds := testsize.Pick(t, 1, 20, "seed(s) of each known-bad lock")
	for _, reg := range etcdlock.Regressions() {
		t.Run(reg.Name, func(t *testing.T) {
			// Side by side, each with at most two configurations at once.
			t.Parallel()
			sum, err := scenarios.Run(t.Context(), scenarios.Config{
				Scenarios: reg.Scenarios, Locks: []string{reg.Name}, Resources: resource.Names(),
				Seed: 1, Runs: seeds, Parallel: 2,
			})
			require.NoError(t, err)
			require.Len(t, sum.Results, seeds*len(reg.Scenarios)*len(resourcesOn(scenarios.DefaultKind())))
			for _, r := range sum.Results {
				assert.Equal(t, models.Fail, r.Verdict, "%s × %s seed %d: %s", r.Scenario, r.Resource, r.Seed, r.Error)
				assert.True(t, r.Matches, "%s × %s seed %d", r.Scenario, r.Resource, r.Seed)
				caught := false
				for _, v := range r.Checks {
					caught = caught || (v.Check == reg.Check && v.Result == models.Fail)
				}
				assert.True(t, caught, "%s × %s seed %d: the %s check must catch it", r.Scenario, r.Resource, r.Seed, reg.Check)
			}
			assert.Equal(t, 0, sum.ExitCode())
		})
	}
}

// Every known-bad Redis lock is caught by the lessons its regression
// names, by the check it names, on a Redis started for it (redis-del by
// stale-release's validity, redis-ignores-deadline by gave-up's deadline).
func TestRedisKnownBadLocksAreCaught(t *testing.T) {
	t.Parallel()
	if _, err := redisd.Find(); err != nil {
		t.Skipf("%v: the Redis store was not tried (.ci/run installs it)", err)
	}
	for _, reg := range redislock.Regressions() {
		t.Run(reg.Name, func(t *testing.T) {
			t.Parallel()
			// Redlock gives no token: its locks are judged on the unfenced
			// store, where a fenced one would skip them.
			resource := "fenced"
			if l, err := redislock.Find(reg.Name); err == nil && l.Masters > 0 {
				resource = "unfenced"
			}
			sum, err := scenarios.Run(t.Context(), scenarios.Config{Locks: []string{reg.Name},
				Scenarios: reg.Scenarios, Resources: []string{resource}, Runs: 1, Parallel: 2})
			require.NoError(t, err)
			require.Len(t, sum.Results, len(reg.Scenarios))
			for _, r := range sum.Results {
				if strings.Contains(r.Skipped, "cannot move a client's clock") {
					t.Skip(r.Skipped) // no C compiler for the clock shim (.ci/run installs one)
				}
				assert.Equal(t, models.Fail, r.Verdict, "%s: %s", r.Scenario, r.Error)
				assert.True(t, slices.ContainsFunc(r.Checks, func(v models.Verdict) bool {
					return v.Check == reg.Check && v.Result == models.Fail
				}), "%s: caught by %s: %v", r.Scenario, reg.Check, r.Checks)
			}
		})
	}
}

// The twin of redis-wall-deadline that counts its key's TTL on the
// machine's uptime tells its holder in time, its clock set back, slow or
// untouched, on every resource: client-clock-back and client-clock-slow
// catch the clock, not the lock's being a program that tells.
func TestAClockSetBackIsToldByALockThatCountsOnAMonotonicClock(t *testing.T) {
	t.Parallel()
	if _, err := redisd.Find(); err != nil {
		t.Skipf("%v: the Redis store was not tried (.ci/run installs it)", err)
	}
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Store: "redis",
		Locks:     []string{"exec:sh ../lock/redislock/deadline-lock.sh monotonic"},
		Scenarios: []string{"client-clock-back", "client-clock-slow"}, Resources: resource.Names(), Runs: 1, Parallel: 2})
	require.NoError(t, err)
	judged := 0
	for _, r := range sum.Results {
		if strings.Contains(r.Skipped, "cannot move a client's clock") {
			t.Skip(r.Skipped)
		}
		if r.Skipped != "" {
			continue // another store's resource
		}
		judged++
		assert.Equal(t, models.Pass, r.Verdict, "%s × %s: %s", r.Scenario, r.Resource, r.Error)
		assert.True(t, slices.ContainsFunc(r.Checks, func(v models.Verdict) bool {
			return v.Check == "told-lost" && v.Result == models.Pass
		}), "%s × %s: judged by told-lost: %v", r.Scenario, r.Resource, r.Checks)
	}
	assert.Equal(t, 6, judged, "unfenced, fenced and redis-guarded, on both lessons")
}

// deleteByName is a user's lock whose release deletes the lock's key by
// name, whoever holds it now.
type deleteByName struct {
	lock.Locker
	cli *clientv3.Client
}

func (d deleteByName) Release(ctx context.Context, g lock.Grant) error {
	_, err := d.cli.Delete(ctx, g.Key)
	return err
}

// stale-release catches a lock whose late release frees the lock someone
// else holds: the waiter is granted beside the holder, on every resource.
// (A user's lock, through Config.Factories: the catalog expects PASS of it,
// and the run says it did not.)
func TestStaleReleaseCatchesAReleaseByName(t *testing.T) {
	t.Parallel() // a few configurations, mostly waiting: side by side with the others
	byName := func(cli *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
		l, err := etcdlock.NewTTLPoll(cli, name, opts)
		return deleteByName{l, cli}, err
	}
	caughtOnEveryResource(t, "stale-release", byName, 5, "validity", "c3 granted beside c2")
}
