package bench_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/lock/zklock"
)

// ZooKeeper's recipe wakes one waiter per release, the one whose
// predecessor went; the naive recipe that watches the lock's children
// wakes every waiter at every change — the herd — and bench tells them
// apart by the notifications it reads off the clients' links. The
// servers' CPU is measured apart from the clients'.
func TestRunZooKeeperTellsTheHerd(t *testing.T) {
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("%v: the ZooKeeper locks were not measured (.ci/run installs it)", err)
	}
	ens, err := zkd.Start(t.Context(), 3, zkd.Options{})
	require.NoError(t, err)
	defer ens.Close()
	futile := map[string]float64{}
	for _, name := range []string{"zk-lock", "zk-herd"} {
		l, err := zklock.Find(name)
		require.NoError(t, err)
		res, err := bench.RunZooKeeper(t.Context(), ens, bench.Config{Lock: name, ZooKeeper: l.Factory, Clients: 5,
			Acquires: 40, ClusterCPU: ens.CPU})
		require.NoError(t, err, name)
		assert.Equal(t, 40, res.Acquires, name)
		assert.Positive(t, res.Requests, name)
		assert.Positive(t, res.CPU.Cluster, "%s: the ensemble's CPU, apart", name)
		futile[name] = res.FutileWakeups
	}
	assert.Less(t, futile["zk-lock"], 0.5, "one waiter woken per release")
	assert.Greater(t, futile["zk-herd"], 1.5, "every waiter woken: the herd")
	floor, err := bench.ZooKeeperFloor(t.Context(), ens, 20)
	require.NoError(t, err)
	assert.Positive(t, floor.P50)
}
