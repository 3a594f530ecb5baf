package etcdrun

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/run"
)

// slowLinkLapse runs the same steps for a lock on a real cluster: c1 is
// granted, then its link turns slow (1.5 s each way, longer than the 1 s
// TTL) with no fault scheduled — a starved network, not the lab's doing —
// so keep-alives c1 sends in time reach the server too late and its lease
// lapses; c2 is then granted and writes. It returns the report on the
// unfenced history and its lease-lost events.
func slowLinkLapse(t *testing.T, c *cluster.Cluster, f etcdlock.Factory, id string) (models.Report, []history.Event) {
	t.Helper()
	ctx := t.Context()
	e, err := New(Config{Cluster: c, Factory: f, TTL: 1, RunID: id, Resource: []string{"unfenced"}, OpTimeout: 10 * time.Second})
	require.NoError(t, err)
	e.Bind(ctx)
	t.Cleanup(func() { assert.NoError(t, e.Close()) })
	require.NoError(t, e.AddClient(ctx, "c1", "m1"))
	require.NoError(t, e.AddClient(ctx, "c2", "m2"))
	out, err := e.Acquire(ctx, "c1")
	require.NoError(t, err)
	require.True(t, out.Granted(), "%v", out)
	cl, err := c.Client(e.clientName("c1"))
	require.NoError(t, err)
	cl.SetDelay(1500 * time.Millisecond)
	out, err = e.WaitLeaseGone(ctx, "c1")
	require.NoError(t, err, "%v", out)
	cl.SetDelay(0)
	out, err = e.Acquire(ctx, "c2")
	require.NoError(t, err)
	require.True(t, out.Granted(), "%v", out)
	_, err = e.CSWork(ctx, "c2", 0)
	require.NoError(t, err)
	reports, err := e.Reports()
	require.NoError(t, err)
	require.Len(t, reports, 1)
	var lost []history.Event
	for _, ev := range e.Events(0) {
		if ev.Type == history.LeaseLost && ev.Client == "c1" {
			lost = append(lost, ev)
		}
	}
	return reports[0], lost
}

// A lease its lock kept renewing, lost because the link was too slow to
// carry the renewals in time with no fault scheduled, is the environment's
// doing: the environment verdict is ERROR with the keep-alive as evidence,
// and lease-kept does not blame the lock. A lock that never renews, under
// the same slow link, is still the lock's failure (lease-kept FAIL) and
// the environment is not blamed.
func TestASlowLinkLapseIsTheEnvironments(t *testing.T) {
	c, err := cluster.Start(t.Context(), cluster.Config{Members: 3})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) }) // after the runs' Close: cleanups run last first

	rep, lost := slowLinkLapse(t, c, etcdlock.NewQueue, "env-queue")
	require.NotEmpty(t, lost, "c1's lease lapsed")
	assert.Positive(t, lost[0].RenewedAt, "the lab saw c1 send a keep-alive: %+v", lost[0])
	assert.Equal(t, models.Error, rep.Environment.Result, rep.Environment.Explanation)
	assert.Contains(t, rep.Environment.Explanation, "The environment let a renewed lease lapse: c1's lease ended")
	for _, v := range rep.Safety {
		assert.NotEqual(t, models.Fail, v.Result, "%s: %s", v.Check, v.Explanation)
	}

	bad, ok := etcdlock.LookupRegression("set-nx-px")
	require.True(t, ok)
	rep, lost = slowLinkLapse(t, c, bad.Factory, "env-setnxpx")
	require.NotEmpty(t, lost, "c1's lease lapsed")
	assert.NotEqual(t, models.Error, rep.Environment.Result, rep.Environment.Explanation)
	var kept models.Verdict
	for _, v := range rep.Safety {
		if v.Check == "lease-kept" {
			kept = v
		}
	}
	assert.Equal(t, models.Fail, kept.Result, kept.Explanation)
}

// startingProcess is a lock run as a process whose program has not said
// it is up.
type startingProcess struct{ starting bool }

func (startingProcess) Stop() error      { return nil }
func (startingProcess) Continue() error  { return nil }
func (startingProcess) Kill() error      { return nil }
func (p startingProcess) Starting() bool { return p.starting }

// wait-queued gives a program still starting its start-up allowance: an
// interpreter starting on a busy machine is not the lock's waiting.
func TestQueueWaitAllowsForAStartingProgram(t *testing.T) {
	assert.Equal(t, faults.DefaultWait, run.QueueWait(nil), "a Go lock")
	assert.Equal(t, faults.DefaultWait, run.QueueWait(startingProcess{}), "a program that is up")
	assert.Equal(t, faults.DefaultWait+process.StartupAllowance, run.QueueWait(startingProcess{starting: true}))
}

// A member cut off from the others by no fault of the schedule (here the
// cluster is partitioned behind the nemesis's back, as a starved machine
// holds heartbeats up) follows no leader for a while, and the run's
// histories say so: the member and the span, for the environment check.
// The partition holds until the member refuses a watch that requires a
// leader, as it refused a lock's in CI: several election timeouts.
func TestALeaderlessMemberIsOnTheHistory(t *testing.T) {
	c, err := cluster.Start(t.Context(), cluster.Config{Members: 3})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	ctx := t.Context()
	e, err := New(Config{Cluster: c, Factory: etcdlock.NewQueue, TTL: 2, RunID: "leaderless", Resource: []string{"unfenced"}})
	require.NoError(t, err)
	e.Bind(ctx)
	cl, err := c.NewClient("watcher", "m2")
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	w := cl.Etcd().Watch(wctx, "k", clientv3.WithCreatedNotify())
	require.True(t, (<-w).Created)
	require.NoError(t, c.Partition([]string{"m2"}))
	for wr := range w {
		if wr.Err() != nil {
			assert.ErrorIs(t, wr.Err(), rpctypes.ErrNoLeader)
			break
		}
	}
	require.NoError(t, c.Heal())
	require.NoError(t, c.CloseClient("watcher"))
	m2 := func() []history.Event {
		var out []history.Event
		for _, ev := range e.Events(0) {
			if ev.Type == history.Observed && ev.What == history.ObservedLeaderless && ev.Member == "m2" {
				out = append(out, ev)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(m2()) > 0 }, 10*time.Second, 10*time.Millisecond,
		"the span ends once m2 follows a leader again")
	require.NoError(t, e.Close())
	// (If m2 led, the others' election is on the history too.)
	require.Len(t, m2(), 1, "%+v", m2())
	assert.Greater(t, m2()[0].Time-m2()[0].StalledFrom, int64(100*time.Millisecond), "several election timeouts")
}
