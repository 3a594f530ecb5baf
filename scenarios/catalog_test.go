package scenarios_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenarios"
)

// Every catalog scenario holds its expectation for every built-in lock and
// resource: unsafe configurations are caught, safe ones never flagged.
func TestCatalogHoldsItsExpectations(t *testing.T) {
	out := t.TempDir()
	var log strings.Builder
	sum, err := scenarios.Run(t.Context(), scenarios.Config{
		Scenarios: scenarios.Names(), Locks: lock.Names(), Resources: lock.ResourceNames(),
		Seed: 1, Out: out, Progress: &log,
	})
	t.Log("\n" + log.String())
	require.NoError(t, err)
	require.True(t, sum.Complete)
	require.Len(t, sum.Results, len(scenarios.Catalog)*len(lock.Names())*len(lock.ResourceNames()))
	for _, r := range sum.Results {
		assert.True(t, r.Matches, "%s × %s × %s: got %s, expected %s (%s)", r.Scenario, r.Lock, r.Resource, r.Verdict, r.Expected, r.Error)
		if r.History != "" {
			_, _, err := history.ReadFile(r.History)
			assert.NoError(t, err, "the recorded history reads back")
		}
	}
	assert.Equal(t, 0, sum.ExitCode())
	_, err = os.Stat(filepath.Join(out, "results.json"))
	assert.NoError(t, err)
}
