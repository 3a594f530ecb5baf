package zkstore_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/scenarios"
	_ "github.com/locklab/locklab/scenarios/zkstore"
)

// zk-lock through the catalog: every lesson for a ZooKeeper lock runs on an
// ensemble of its own and ends as documented — the paused holder FAILs the
// unfenced counter and its zxid fences it; etcd's resource is skipped,
// saying why; an etcd lesson is left out, saying why.
func TestZkLockKeepsTheCatalogsExpectations(t *testing.T) {
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("%v: the ZooKeeper store was not tried (.ci/run installs it)", err)
	}
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Locks: []string{"zk-lock"},
		Scenarios: []string{"paused-holder", "crashed-holder", "lost-acquire"}, Resources: []string{"unfenced", "fenced", "etcd-guarded"},
		Runs: 1, Parallel: 2})
	require.NoError(t, err)
	require.NotEmpty(t, sum.Results)
	ran := 0
	for _, r := range sum.Results {
		if r.Resource == "etcd-guarded" {
			assert.Contains(t, r.Skipped, "a ZooKeeper lock keeps none there")
			continue
		}
		ran++
		assert.True(t, r.Matches, "%s × %s: %s, expected %s", r.Scenario, r.Resource, r.Verdict, r.Expected)
	}
	assert.Equal(t, 4, ran, "two lessons on two resources; lost-acquire is etcd's")
}
