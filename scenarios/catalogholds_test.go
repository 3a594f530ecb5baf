package scenarios_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/testsize"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/redislock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// familyOf are the built-in locks, one of each family of design, that the
// catalog test runs by default: the revision queue (queue; etcd-mutex and
// etcd-election queue the same way), one key polled (ttl-poll), one key
// watched by every waiter (single-key-watch), a lock run as a process
// (etcdctl), a Redis primary (redis-setnx; redis-watchdog renews the same
// key) and Redlock. LOCKLAB_LONG=1 runs every lock; locktest's README test
// runs etcd-mutex through every lesson on three seeds.
var familyOf = []string{"queue", "ttl-poll", "single-key-watch", "etcdctl", "redis-setnx", "redlock"}

// catalogParallel is how many configurations the catalog test runs at
// once: as many as `locklab run` does by default (8) where the machine had
// room when the tests began — the lessons mostly wait, and this test is
// the package's longest — and the runner's default on a busy machine
// (twice the CPUs), whose leases more at once would starve.
func catalogParallel() int {
	if testsize.Roomy() {
		return 8
	}
	return scenarios.DefaultParallel()
}

// Every catalog scenario holds its expectation for every built-in lock (one
// of each family by default) and resource: unsafe configurations are
// caught, safe ones never flagged.
func TestCatalogHoldsItsExpectations(t *testing.T) {
	t.Parallel() // the longest: side by side with the others
	locks := etcdlock.Names()
	redisLocks := redislock.Names()
	if !testsize.Long() {
		keep := func(l string) bool { return !slices.Contains(familyOf, l) }
		locks, redisLocks = slices.DeleteFunc(locks, keep), slices.DeleteFunc(slices.Clone(redisLocks), keep)
		t.Logf("one lock of each family here (%s); %s=1 runs every lock", strings.Join(familyOf, ", "), testsize.Env)
	}
	if raceBuilt {
		// Under the race detector the etcdctl lock runs a race-built etcdctl
		// (this binary) per grant, too slow to start for contention's
		// waiters to be queued at most releases (a vacuous ERROR, seen in
		// CI). The plain pass runs it; TestExec* run it under -race.
		locks = slices.DeleteFunc(slices.Clone(locks), func(l string) bool { return l == "etcdctl" })
	}
	// The Redis locks on every scenario (those that do not apply to them
	// are skipped at once), where redis-server is installed.
	if _, err := redisd.Find(); err == nil {
		locks = append(slices.Clone(locks), redisLocks...)
	} else {
		t.Logf("%v: the Redis locks were not run (.ci/run installs it)", err)
	}
	catalogHolds(t, scenarios.Catalog(), locks)
}

// catalogHolds runs lessons for locks on every resource, on seed 1, and
// requires every lesson of a lock's store to be run and to hold its
// expectation.
func catalogHolds(t *testing.T, lessons []scenarios.Scenario, locks []string) {
	out := t.TempDir()
	var log strings.Builder
	names := make([]string, len(lessons))
	for i, s := range lessons {
		names[i] = s.Name
	}
	sum, err := scenarios.Run(t.Context(), scenarios.Config{
		Scenarios: names, Locks: locks, Resources: resource.Names(),
		Seed: 1, Out: out, Progress: &log,
		Parallel: catalogParallel(),
	})
	t.Log("\n" + log.String())
	require.NoError(t, err)
	require.True(t, sum.Complete)
	// Every lesson for every lock of its store: etcd's for the etcd locks,
	// a Redis primary's for the locks on one, Redlock's for Redlock.
	pairs := 0
	for _, s := range lessons {
		for _, l := range locks {
			kind, ok := scenarios.KindOf(l)
			if !ok {
				kind = scenarios.DefaultKind()
			}
			if s.For(kind) {
				pairs += len(resourcesOn(kind))
			}
		}
	}
	require.Len(t, sum.Results, pairs)
	unjudged := 0
	for _, r := range sum.Results {
		if r.Skipped != "" && slices.Contains(redislock.Names(), r.Lock) {
			// etcd's resource, or a fenced one for Redlock.
			continue
		}
		if r.Skipped != "" {
			// Only a lesson a lock cannot learn by design is skipped: the
			// retried release, for etcdctl, which takes a lease per grant;
			// a client's own clock, for a Go lock (its clock is the lab's)
			// or a program that cannot tell its holder (etcdctl).
			if strings.HasPrefix(r.Scenario, "client-clock-") {
				assert.Regexp(t, "a Go lock runs inside the lab's own process|the lock's grants carry no Lost", r.Skipped)
			} else {
				assert.Equal(t, "retried-release", r.Scenario, r.Skipped)
				assert.Contains(t, r.Skipped, "does not apply to this lock: it took a new lease")
			}
			assert.Empty(t, r.Verdict, "a skipped run has no verdict")
			continue
		}
		if !matches(t, r) {
			unjudged++
		} else if !r.Matches {
			for _, v := range r.Checks {
				if v.Result != models.Pass && v.Result != models.NotApplicable {
					t.Logf("  %s %s: %s %v", v.Check, v.Result, v.Explanation, v.Evidence)
				}
			}
		}
		if r.History != "" {
			_, _, err := history.ReadFile(r.History)
			assert.NoError(t, err, "the recorded history reads back")
		}
	}
	enough(t, unjudged, len(sum.Results))
	if unjudged == 0 {
		assert.Equal(t, 0, sum.ExitCode())
	}
	_, err = os.Stat(filepath.Join(out, "results.json"))
	assert.NoError(t, err)
}
