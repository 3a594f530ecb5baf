package scenarios_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// A built-in lock as it ships fails its documented lessons on every
// resource, each by the check its documentation names (etcdlock.Lock.Weak),
// and the run calls that as expected; the lab's adapter of it
// (etcdlock.Adapters) keeps the same lessons. A change that lets etcd's Mutex
// or Election pass what they fail as shipped would make the lab's baseline
// a lie.
func TestBuiltinWeaknessesAreWhatTheLocksDo(t *testing.T) {
	t.Parallel()
	adapterOf := map[string]string{"etcd-mutex": "etcd-mutex-retry-safe", "etcd-election": "etcd-election-retry-safe"}
	for _, l := range etcdlock.Locks() {
		name, weak := l.Name, l.Weak
		if len(weak) == 0 {
			continue
		}
		lessons := slices.Sorted(maps.Keys(weak))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sum, err := scenarios.Run(t.Context(), scenarios.Config{Scenarios: lessons, Locks: []string{name},
				Resources: resource.Names(), Seed: 1, Runs: 1, Parallel: 3})
			require.NoError(t, err)
			require.Len(t, sum.Results, len(lessons)*len(resourcesOn(scenarios.DefaultKind())))
			for _, r := range sum.Results {
				assert.Equal(t, models.Fail, r.Verdict, "%s × %s: %s", r.Scenario, r.Resource, r.Error)
				assert.True(t, r.Matches, "%s × %s: a documented FAIL", r.Scenario, r.Resource)
				caught := slices.ContainsFunc(r.Checks, func(v models.Verdict) bool {
					return v.Check == weak[r.Scenario] && v.Result == models.Fail
				})
				assert.True(t, caught, "%s × %s: the %s check must be what fails it", r.Scenario, r.Resource, weak[r.Scenario])
			}
		})
		adapter := adapterOf[name]
		require.Contains(t, etcdlock.Adapters(), adapter)
		t.Run(adapter, func(t *testing.T) {
			t.Parallel()
			sum, err := scenarios.Run(t.Context(), scenarios.Config{Scenarios: lessons, Locks: []string{adapter},
				Resources: []string{"fenced"}, Seed: 1, Runs: 1, Parallel: 3})
			require.NoError(t, err)
			for _, r := range sum.Results {
				assert.Equal(t, models.Pass, r.Verdict, "%s × %s: %s", r.Scenario, r.Resource, r.Error)
			}
			assert.Equal(t, 0, sum.ExitCode())
		})
	}
}
