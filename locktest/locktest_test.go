package locktest_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/locktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A correct lock passes the gate, with the lessons on an unfenced store
// logged as findings and a built-in lock beside it for comparison.
func TestQueuePassesTheGate(t *testing.T) {
	locktest.Run(t, lock.NewQueue,
		locktest.Scenarios("paused-holder", "slow-holder", "expire-while-waiting"),
		locktest.Resources(locktest.Unfenced, locktest.Fenced, locktest.EtcdGuarded),
		locktest.CompareWith("etcd-mutex"))
}

// mustFail is set in the environment of the child test that gates a lock
// known to be broken.
const mustFail = "LOCKTEST_MUST_FAIL"

// The gate fails a broken lock: set-nx-px never renews its lease, and the
// slow-holder scenario catches it. The gate runs in a child test process,
// whose failure is the expected outcome.
func TestBrokenLockFailsTheGate(t *testing.T) {
	if os.Getenv(mustFail) != "" {
		bad, ok := lock.LookupRegression("set-nx-px")
		require.True(t, ok)
		locktest.Run(t, bad.Factory, locktest.Scenarios("slow-holder"))
		return
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestBrokenLockFailsTheGate$", "-test.v")
	cmd.Env = append(os.Environ(), mustFail+"=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the gate must fail a broken lock:\n%s", out)
	assert.Contains(t, string(out), "--- FAIL: TestBrokenLockFailsTheGate/slow-holder/lock-under-test/fenced/1")
	assert.Contains(t, string(out), "lease-kept FAIL")
	assert.Contains(t, string(out), "the same schedule again: go test -run '^TestBrokenLockFailsTheGate$/^slow-holder$'")
}
