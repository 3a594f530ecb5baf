package zkstore_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/lock/zklock"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
	_ "github.com/locklab/locklab/scenarios/zkstore"
)

// zk-lock through the catalog: every lesson for a ZooKeeper lock runs on
// the run's shared ensemble and ends as documented — the paused holder FAILs the
// unfenced counter and its zxid fences it; a waiter whose session the
// ensemble expired (its links cut for longer than its timeout) is told so,
// or — go-zookeeper's Lock gives its waiter up when the link breaks, most
// often before the session ends — the lesson is skipped as not its to
// learn, never an ERROR; a holder cut off is not judged on being told (its
// grants carry no Lost); etcd's resource is skipped, saying why; an etcd
// lesson is left out, saying why.
func TestZkLockKeepsTheCatalogsExpectations(t *testing.T) {
	t.Parallel() // runs on an ensemble of its own, mostly waiting
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("%v: the ZooKeeper store was not tried (.ci/run installs it)", err)
	}
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Locks: []string{"zk-lock"},
		Scenarios: []string{"paused-holder", "crashed-holder", "expire-while-waiting-lapse", "holder-told"},
		Resources: []string{"unfenced", "fenced", "etcd-guarded"},
		Runs:      1, Parallel: 2})
	require.NoError(t, err)
	require.NotEmpty(t, sum.Results)
	ran := 0
	for _, r := range sum.Results {
		if r.Resource == "etcd-guarded" {
			assert.Contains(t, r.Skipped, "a lock on ZooKeeper keeps none there")
			continue
		}
		ran++
		if r.Scenario == "expire-while-waiting-lapse" && r.Skipped != "" {
			assert.Contains(t, r.Skipped, "when its link broke")
			continue
		}
		assert.True(t, r.Matches, "%s × %s: %s, expected %s", r.Scenario, r.Resource, r.Verdict, r.Expected)
	}
	assert.Equal(t, 8, ran, "four lessons on two resources (holder-told: zk-lock gives no Lost, and is not judged there)")
}

// lost-acquire on ZooKeeper: the create's answer is lost off the wire
// (the lab spots the create among the client's requests and holds every
// answer from it on, until the node stands on the ensemble). zk-lock
// rides it out — its node carries a GUID it looks for after the broken
// connection, and it is granted: the lesson is not its to learn, and is
// skipped — or, when its one look for the node fails too, FAILs liveness
// as documented. (zk-unprotected creates again and waits behind its own first
// node, which holds the lock for nobody while its session lives: the
// liveness check catches the wedge — TestZooKeepersKnownBadLocksAreCaught
// runs that configuration.)
func TestALostCreateIsRiddenOutOnlyByAProtectedNode(t *testing.T) {
	t.Parallel() // runs on an ensemble of its own, mostly waiting
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("%v: the ZooKeeper store was not tried (.ci/run installs it)", err)
	}
	// Sessions of 2 s: a client reconnecting on a loaded machine still
	// finds its node before the lesson's bounds (what is taught is the
	// GUID, not the timing).
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Locks: []string{"zk-lock"},
		Scenarios: []string{"lost-acquire"}, Resources: []string{"fenced"}, Runs: 1, LeaseScale: 2})
	require.NoError(t, err)
	require.Len(t, sum.Results, 1)
	r := sum.Results[0]
	if r.Skipped == "" {
		// go-zookeeper looks for its node once: when that look went out on
		// the connection as it closed, Lock returns the error and leaves
		// the node — documented (zklock's Weak), and caught by liveness.
		assert.True(t, r.Matches, "%s: %s", r.Verdict, r.Error)
		assert.True(t, slices.ContainsFunc(r.Checks, func(v models.Verdict) bool {
			return v.Check == "liveness" && v.Result == models.Fail
		}), "neither ridden out nor caught by liveness: %s %v", r.Verdict, r.Checks)
		return
	}
	assert.Contains(t, r.Skipped, "rode out the lost answer", "%s: %s", r.Verdict, r.Error)
}

// lost-request on ZooKeeper: the request c2 sends after its create is held
// off the wire, then its connection broken with it unanswered. zk-lock
// (go-zookeeper's Lock) returns the error and leaves its node, which holds
// the lock for nobody under a session that lives on: liveness FAILs, as
// documented for it. zk-herd drops its node on the error: PASS.
func TestARequestLostAfterTheCreateStrandsGoZookeepersLock(t *testing.T) {
	t.Parallel() // runs on an ensemble of its own, mostly waiting
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("%v: the ZooKeeper store was not tried (.ci/run installs it)", err)
	}
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Locks: []string{"zk-lock", "zk-herd"},
		Scenarios: []string{"lost-request"}, Resources: []string{"fenced"}, Runs: 1, Parallel: 2})
	require.NoError(t, err)
	require.Len(t, sum.Results, 2)
	for _, r := range sum.Results {
		assert.True(t, r.Matches, "%s: %s, expected %s: %s", r.Lock, r.Verdict, r.Expected, r.Error)
		if r.Lock == "zk-lock" {
			assert.True(t, slices.ContainsFunc(r.Checks, func(v models.Verdict) bool {
				return v.Check == "liveness" && v.Result == models.Fail
			}), "caught by liveness: %v", r.Checks)
		}
	}
}

// Every known-bad ZooKeeper lock is caught by the lessons its regression
// names, by the check it names (zk-unprotected by lost-acquire's liveness,
// zk-persistent by split-acquire's, zk-deaf by holder-told's told-lost,
// zk-release-mine by retried-release's validity).
func TestZooKeepersKnownBadLocksAreCaught(t *testing.T) {
	t.Parallel() // runs on an ensemble of its own, mostly waiting
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("%v: the ZooKeeper store was not tried (.ci/run installs it)", err)
	}
	for _, reg := range zklock.Regressions() {
		t.Run(reg.Name, func(t *testing.T) {
			t.Parallel() // waits for its lock to wedge, on an ensemble of its own
			sum, err := scenarios.Run(t.Context(), scenarios.Config{Locks: []string{reg.Name},
				Scenarios: reg.Scenarios, Resources: []string{"fenced"}, Runs: 1, Parallel: 2})
			require.NoError(t, err)
			require.Len(t, sum.Results, len(reg.Scenarios), reg.Name)
			for _, r := range sum.Results {
				assert.Equal(t, models.Fail, r.Verdict, "%s × %s: %s", reg.Name, r.Scenario, r.Error)
				assert.True(t, slices.ContainsFunc(r.Checks, func(v models.Verdict) bool {
					return v.Check == reg.Check && v.Result == models.Fail
				}), "%s × %s: caught by %s: %v", reg.Name, r.Scenario, reg.Check, r.Checks)
			}
		})
	}
}

// leader-killed and server-isolated on ZooKeeper: the leader dies, or the
// holder's server is cut off, under a holder and a waiter; once another
// server leads and serves both clients, the holder works and releases and
// the waiter is granted — sessions, nodes and the waiter's watch live
// through it.
func TestAServerLostLosesNothingOnZooKeeper(t *testing.T) {
	t.Parallel() // runs on an ensemble of its own, mostly waiting
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("%v: the ZooKeeper store was not tried (.ci/run installs it)", err)
	}
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Locks: []string{"zk-lock"},
		Scenarios: []string{"leader-killed", "server-isolated"}, Resources: []string{"fenced"}, Runs: 1, Parallel: 2})
	require.NoError(t, err)
	require.Len(t, sum.Results, 2)
	for _, r := range sum.Results {
		assert.True(t, r.Matches, "%s: %s, expected %s: %s", r.Scenario, r.Verdict, r.Expected, r.Error)
	}
}
