package zkrun_test

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/lock/zklock"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/run/zkrun"
	"github.com/locklab/locklab/script"
)

var (
	_ script.Target = (*zkrun.Env)(nil)
	_ run.Faulter   = (*zkrun.Env)(nil)
)

// newEnv starts an ensemble of three and a run of zk-lock on it, or skips
// where ZooKeeper is missing.
func newEnv(t *testing.T) *zkrun.Env { return newEnvOf(t, "zk-lock") }

// newEnvOf is newEnv of the ZooKeeper lock called name.
func newEnvOf(t *testing.T, name string) *zkrun.Env {
	t.Helper()
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("%v: the ZooKeeper store was not tried (.ci/run installs it)", err)
	}
	l, err := zklock.Find(name)
	require.NoError(t, err)
	ens, err := zkd.Start(t.Context(), 3, zkd.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { ens.Close() })
	e, err := zkrun.New(zkrun.Config{Ensemble: ens, Factory: l.Factory, TTL: 1, RunID: t.Name()})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.Close()) })
	e.Bind(context.WithoutCancel(t.Context()))
	return e
}

func do(t *testing.T, e script.Target, lines ...string) []string {
	t.Helper()
	var outs []string
	for _, line := range lines {
		out, err := script.DoLine(t.Context(), e, line)
		require.NoError(t, err, line)
		outs = append(outs, out.String())
	}
	return outs
}

func verdicts(t *testing.T, e *zkrun.Env) []string {
	t.Helper()
	reps, err := e.Reports()
	require.NoError(t, err)
	var out []string
	for i, r := range reps {
		out = append(out, fmt.Sprintf("%s %s", e.Resources()[i], r.Result()))
	}
	return out
}

// The paused holder on ZooKeeper: its session ends while it is frozen, the
// next client is granted, and the frozen one writes after it. The zxid
// fences it, and zk-guarded's multi finds its lock node gone.
func TestAPausedZooKeeperHolderIsFencedByItsZxid(t *testing.T) {
	e := newEnv(t)
	outs := do(t, e, "client c1 member=m1", "client c2 member=m2", "acquire c1", "pause c1 at=before-write",
		"cs c1 async", "wait-paused c1", "wait-lease-gone c1", "acquire c2", "cs c2", "release c2", "resume c1", "await c1")
	assert.Equal(t, []string{"c1: connected to m1", "c2: connected to m2", "c1: granted token=t1",
		"c1: will pause at before-write", "c1: in critical section", "c1: paused at before-write, link cut",
		"server: c1's lease is gone", "c2: granted token=t2",
		"c2: unfenced read 0 wrote 1; fenced read 0 wrote 1; zk-guarded read 0 wrote 1", "c2: released", "c1: resumed",
		"c1: unfenced read 0 wrote 1; fenced read 0 rejected: stale token; zk-guarded read 0 rejected: lock lost"}, outs)
	assert.Equal(t, []string{"unfenced FAIL", "fenced PASS", "zk-guarded PASS"}, verdicts(t, e))
}

// The leader killed: the fault names the server that led, another leads
// the rest, and a client homed on the dead one is granted through another
// server within its session; heal starts the dead server again.
func TestAKilledLeaderIsFollowedByAnother(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	do(t, e, "client c1 member=m1", "client c2 member=m2", "client c3 member=m3")
	in, err := e.Fault(ctx, faults.Fault{Kind: faults.KillLeader})
	require.NoError(t, err)
	dead := in.Target()
	require.Contains(t, e.Members(), dead)
	leader, err := e.WaitLeader(ctx, dead)
	require.NoError(t, err)
	assert.NotEqual(t, dead, leader)
	client := map[string]string{"m1": "c1", "m2": "c2", "m3": "c3"}[dead]
	assert.Equal(t, []string{client + ": granted token=t1"}, do(t, e, "acquire "+client), "through another server")
	assert.Empty(t, e.CutOff(dead), "a client of ZooKeeper's has every server")
	require.NoError(t, in.Undo(ctx))
	_, err = e.Fault(ctx, faults.Fault{Kind: faults.PauseClient, Client: "c1"})
	assert.ErrorContains(t, err, "pause-client", "a client's fault is not a server's")
}

// A ZooKeeper server that died during a run, not by a fault of the lab's,
// is said to have died, with its last output — not read as nodes the run
// could not remove.
func TestAZooKeeperServerThatDiedSaysSo(t *testing.T) {
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("%v: the ZooKeeper store was not tried (.ci/run installs it)", err)
	}
	l, err := zklock.Find("zk-lock")
	require.NoError(t, err)
	ens, err := zkd.Start(t.Context(), 1, zkd.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { ens.Close() })
	e, err := zkrun.New(zkrun.Config{Ensemble: ens, Factory: l.Factory, TTL: 1, RunID: t.Name()})
	require.NoError(t, err)
	e.Bind(context.WithoutCancel(t.Context()))
	do(t, e, "client c1 member=m1", "acquire c1")
	// Its own end, as an OOM kill would be: the lab never asked for it.
	require.NoError(t, exec.Command("pkill", "-KILL", "-f", ens.Root()).Run())
	require.Eventually(t, func() bool { dead, _ := ens.Died(0); return dead }, 10*time.Second, 10*time.Millisecond)
	err = e.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "zookeeper server "+ens.Names()[0]+" died during the run, not by a fault of the lab's")
	assert.NotContains(t, err.Error(), "removing the run's nodes")
}

// A grant's node that no session owns (zk-persistent's) rests on no
// lease: lease-kept FAILs the run as soon as it is granted.
func TestAPersistentNodeRestsOnNoLease(t *testing.T) {
	e := newEnvOf(t, "zk-persistent")
	do(t, e, "client c1 member=m1", "acquire c1", "cs c1", "release c1")
	reps, err := e.Reports()
	require.NoError(t, err)
	i := slices.IndexFunc(reps[0].Safety, func(v models.Verdict) bool { return v.Check == "lease-kept" })
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, models.Fail, reps[0].Safety[i].Result)
	assert.Contains(t, reps[0].Safety[i].Explanation, "rests on no lease")
}
