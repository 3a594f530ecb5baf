package live_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/live"
	"github.com/locklab/locklab/scenarios"
	_ "github.com/locklab/locklab/scenarios/zkstore" // the ZooKeeper locks
)

// A lab of ZooKeeper locks steps through the paused holder on an ensemble
// started for its run: c1 frozen past its session, c2 granted, c1's late
// write — lost on the unfenced counter, refused by the fenced one (the
// grant's zxid is its token).
func TestALabOnZooKeeperServesThePausedHolder(t *testing.T) {
	t.Parallel()
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("live lab on ZooKeeper: %v (.ci/run installs it)", err)
	}
	lab, err := live.New(live.Config{Store: live.BackendStore([]string{"zk-lock", "zk-herd"}, zkKind(t), 3),
		Lock: "zk-lock"})
	require.NoError(t, err)
	t.Cleanup(func() { lab.Close() })
	assert.ErrorContains(t, lab.Load("failover"), "which a lock on a ZooKeeper ensemble cannot")
	require.NoError(t, lab.Load("paused-holder"))
	for {
		if _, ok := lab.Next(t.Context()); !ok {
			break
		}
	}
	s := lab.State()
	assert.Equal(t, []string{"zk-herd", "zk-lock"}, s.Locks)
	verdict := map[string]string{}
	for _, r := range s.Resources {
		verdict[r.Name] = r.Result
	}
	assert.Equal(t, map[string]string{"unfenced": "FAIL", "fenced": "PASS", "zk-guarded": "PASS"}, verdict, "the lesson's verdicts: %+v", s.Steps)
	assert.Error(t, lab.Reset("etcd-mutex"), "the lab's locks are ZooKeeper's")
}

// zkKind is the kind of the ZooKeeper locks.
func zkKind(t *testing.T) scenarios.StoreKind {
	t.Helper()
	k, ok := scenarios.KindOf("zk-lock")
	require.True(t, ok, "scenarios/zkstore is linked")
	return k
}
