package locktest_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/internal/leaks"
	"github.com/locklab/locklab/lock/etcdctl"
	"github.com/locklab/locklab/lock/etcdlock"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/internal/badlocks"
	"github.com/locklab/locklab/internal/testsize"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/locktest"
)

func TestMain(m *testing.M) {
	etcdctl.Serve() // the etcdctl lock's etcdctl is this binary
	// Its gates run whole lessons: not beside the other lesson packages
	// (testsize.Alone says why).
	testsize.Alone()
	// Gates in child processes and in a module outside the repository,
	// each mostly waiting: four at once.
	testsize.WaitBound(4)
	goleak.VerifyTestMain(m, leaks.Known()...)
}

// A correct lock passes the gate, with the lessons on an unfenced store
// logged as findings and a built-in lock beside it for comparison.
func TestQueuePassesTheGate(t *testing.T) {
	locktest.Run(t, etcdlock.NewQueue,
		locktest.Scenarios("paused-holder", "slow-holder", "expire-while-waiting"),
		locktest.Resources(locktest.Unfenced, locktest.Fenced, locktest.EtcdGuarded),
		locktest.CompareWith("etcd-mutex"))
}

// mustFail is set in the environment of a child test whose gate must fail.
const mustFail = "LOCKTEST_MUST_FAIL"

// mustFailInChild runs test in a child test process, where gate runs, and
// returns its output; the child must fail.
func mustFailInChild(t *testing.T, gate func(t *testing.T)) string {
	return mustFailInChildRun(t, "", gate)
}

// mustFailInChildRun is mustFailInChild with a -run pattern for the
// gate's subtests ("/^explore$").
func mustFailInChildRun(t *testing.T, sub string, gate func(t *testing.T)) string {
	t.Parallel() // a child process of its own
	if os.Getenv(mustFail) != "" {
		gate(t)
		return ""
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+t.Name()+"$"+sub, "-test.v")
	cmd.Env = append(os.Environ(), mustFail+"=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the gate must fail:\n%s", out)
	return string(out)
}

// The gate fails a broken lock: set-nx-px never renews its lease, and the
// slow-holder scenario catches it.
func TestBrokenLockFailsTheGate(t *testing.T) {
	out := mustFailInChild(t, func(t *testing.T) {
		bad, ok := etcdlock.LookupRegression("set-nx-px")
		require.True(t, ok)
		locktest.Run(t, bad.Factory, locktest.Scenarios("slow-holder"), locktest.Cases(0))
	})
	if out == "" {
		return
	}
	assert.Contains(t, out, "--- FAIL: TestBrokenLockFailsTheGate/slow-holder/lock-under-test/fenced/1")
	assert.Contains(t, out, "lease-kept FAIL")
	assert.Contains(t, out, "the same schedule again: go test -run '^TestBrokenLockFailsTheGate$/^slow-holder$'")
}

// The gate fails a lock whose waiter misses its wake-up, naming the
// hand-off check, on every seed — not an ERROR of the run: the step that
// awaited the grant went otherwise because of the lock.
func TestAWaiterLeftWaitingFailsTheGate(t *testing.T) {
	out := mustFailInChild(t, func(t *testing.T) {
		locktest.Run(t, badlocks.Deaf, locktest.Scenarios("gave-up"), locktest.Resources(locktest.Fenced), locktest.Seeds(1, 3),
			locktest.Cases(0))
	})
	if out == "" {
		return
	}
	for _, seed := range []string{"1", "2", "3"} {
		assert.Contains(t, out, "--- FAIL: TestAWaiterLeftWaitingFailsTheGate/gave-up/lock-under-test/fenced/"+seed)
	}
	if strings.Contains(out, "hand-off UNKNOWN") {
		// The lab's own process standing still (go test runs packages
		// side by side) decides nothing: the gate fails and says why, and
		// blames neither the lock nor the lab. CPUs merely oversubscribed
		// do not excuse the waiter's wait.
		t.Log("the machine was too busy to judge a hand-off; the gate said so")
		return
	}
	assert.Contains(t, out, "hand-off FAIL")
	// The verdict is the lock's FAIL, never the run's ERROR (a busy
	// machine's environment check may say ERROR beside it, of the run's
	// pace only).
	assert.NotRegexp(t, `seed \d+: ERROR`, out)
}

// A gate where every configuration was skipped tested nothing: it fails.
// (On an external cluster the scenarios that restart members are skipped.)
func TestNothingRanFailsTheGate(t *testing.T) {
	out := mustFailInChild(t, func(t *testing.T) {
		c, err := cluster.Start(t.Context(), cluster.Config{})
		require.NoError(t, err)
		defer c.Close()
		locktest.Run(t, etcdlock.NewQueue, locktest.Scenarios("member-restart"), locktest.Cases(0),
			locktest.Endpoints(cluster.External{Endpoints: c.Endpoints()}))
	})
	if out == "" {
		return
	}
	assert.Contains(t, out, "--- SKIP: TestNothingRanFailsTheGate/member-restart/lock-under-test/fenced/1")
	assert.Contains(t, out, "locktest: nothing tested: every configuration of member-restart was skipped")
}

// The gate's exploration catches a broken lock by itself (the catalog's
// subtests are not run here): etcd-11456 grants a waiter whose lease ended
// while it waited, and a drawn script finds and shrinks that.
func TestExplorationCatchesABrokenLock(t *testing.T) {
	out := mustFailInChildRun(t, "/^explore$", func(t *testing.T) {
		bad, ok := etcdlock.LookupRegression("etcd-11456")
		require.True(t, ok)
		locktest.Run(t, bad.Factory, locktest.Cases(30))
	})
	if out == "" {
		return
	}
	assert.Contains(t, out, "--- FAIL: TestExplorationCatchesABrokenLock/explore")
	assert.Contains(t, out, "expired-waiter FAIL")
	assert.Contains(t, out, "shrunk to")
	assert.Contains(t, out, "the same cases again: go test -run '^TestExplorationCatchesABrokenLock$/^explore$'")
}

// Another store's lessons are left out of the gate in one line, never
// failed; a gate of nothing but such lessons tested nothing, and fails.
func TestOnlyAnotherStoresLessonsTestNothing(t *testing.T) {
	out := mustFailInChild(t, func(t *testing.T) {
		locktest.Run(t, etcdlock.NewQueue, locktest.Scenarios("failover", "redlock-paused"), locktest.Cases(0))
	})
	if out == "" {
		return
	}
	assert.Contains(t, out, "locktest: left out, not lessons for a lock on etcd: failover needs a store that can fail its primary over "+
		"to a replica (failover), which a lock on etcd cannot; redlock-paused needs a store that can keep the lock on a majority "+
		"of independent masters, which a lock on etcd cannot")
	assert.Contains(t, out, "locktest: nothing tested: no lesson asked for is one for a lock on etcd")
	assert.NotContains(t, out, "--- FAIL: TestOnlyAnotherStoresLessonsTestNothing/failover")
}

// A lock that cannot even acquire alone on a healthy cluster fails the
// gate at once, in one line saying what it said — not once per lesson.
func TestALockThatCannotAcquireFailsAtOnce(t *testing.T) {
	out := mustFailInChild(t, func(t *testing.T) {
		broken := func(*clientv3.Client, string, lock.Options) (lock.Locker, error) {
			return nil, errors.New("my-lock: no endpoint configured")
		}
		locktest.Run(t, broken, locktest.Cases(0))
	})
	if out == "" {
		return
	}
	assert.Contains(t, out, "locktest: preflight: making the lock: my-lock: no endpoint configured")
	assert.NotContains(t, out, "paused-holder", "no lesson ran")
}
