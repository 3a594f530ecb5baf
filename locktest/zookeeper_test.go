package locktest_test

import (
	"testing"

	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/lock/zklock"
	"github.com/locklab/locklab/locktest"
	_ "github.com/locklab/locklab/scenarios/zkstore" // the ZooKeeper store
)

// A Go lock on ZooKeeper through the gate: go-zookeeper's recipe, as a
// team would hand it over (a lock.Factory[*zk.Conn]), on two lessons of a
// lock on one server set, each on an ensemble started for it, and one
// explored case (every ensemble is three JVMs: go test keeps to few). The paused holder's unfenced FAIL is documented for every
// lock; its zxid fences it.
func TestAZooKeeperLockThroughTheGate(t *testing.T) {
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("%v (.ci/run installs it)", err)
	}
	t.Parallel()
	locktest.Run(t, zklock.NewRecipe, locktest.Store("zookeeper"),
		locktest.Scenarios("paused-holder", "crashed-holder"), locktest.Cases(1))
}
