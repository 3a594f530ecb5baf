package etcdfaults_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/faults/etcdfaults"
	"github.com/locklab/locklab/history"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// log is a Recorder that keeps events in order.
type log struct {
	mu     sync.Mutex
	events []faults.Event
}

func (l *log) RecordFault(e faults.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *log) all() []faults.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]faults.Event(nil), l.events...)
}

// requirePaired checks that every start has exactly one later end.
func requirePaired(t *testing.T, events []faults.Event) {
	t.Helper()
	open := map[int]bool{}
	for _, e := range events {
		switch e.Phase {
		case faults.Start:
			require.False(t, open[e.ID], "fault %d started twice", e.ID)
			open[e.ID] = true
		case faults.End:
			require.True(t, open[e.ID], "fault %d ended without starting", e.ID)
			delete(open, e.ID)
		}
	}
	require.Empty(t, open, "faults left open")
}

func setup(t *testing.T) (*cluster.Cluster, *etcdfaults.Nemesis, *log, context.Context) {
	t.Helper()
	c, err := cluster.Start(t.Context(), cluster.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	rec := &log{}
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	t.Cleanup(cancel)
	return c, etcdfaults.New(c, rec), rec, ctx
}

func TestKillLeader(t *testing.T) {
	c, n, rec, ctx := setup(t)
	old, err := c.WaitLeader(ctx)
	require.NoError(t, err)
	in, err := n.Apply(ctx, faults.Fault{Kind: faults.KillLeader})
	require.NoError(t, err)
	assert.Equal(t, old, in.Target())
	assert.False(t, c.Running(old))
	now, err := c.Leader(ctx)
	require.NoError(t, err, "kill-leader returns once a successor leads")
	assert.NotEqual(t, old, now)

	require.NoError(t, in.Undo(ctx))
	assert.True(t, c.Running(old), "undo restarts the killed leader")
	require.NoError(t, c.WaitLinearizableRead(ctx, old))
	assert.NoError(t, in.Undo(ctx), "undo twice is harmless")
	ev := rec.all()
	require.Len(t, ev, 2)
	assert.Equal(t, old, ev[1].Target)
	requirePaired(t, ev)
}

// A crash is applied at once and has nothing to undo: its window closes
// as it is done, and the client's connection is a new one. A crash needs
// a client to kill.
func TestCrashClient(t *testing.T) {
	c, n, rec, ctx := setup(t)
	cl, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	old := cl.Etcd()
	_, err = n.Apply(ctx, faults.Fault{Kind: faults.CrashClient})
	require.ErrorContains(t, err, "needs a client")
	_, err = n.Apply(ctx, faults.Fault{Kind: faults.CrashClient, Client: "c1"})
	require.NoError(t, err)
	assert.Empty(t, n.Active(), "nothing to undo")
	assert.NotSame(t, old, cl.Etcd())
	assert.False(t, faults.CrashClient.NeedsOwnedCluster(), "a crash acts on the lab's own client")
	requirePaired(t, rec.all())
}

func TestIsolateLeader(t *testing.T) {
	c, n, rec, ctx := setup(t)
	in, err := n.Apply(ctx, faults.Fault{Kind: faults.IsolateLeader})
	require.NoError(t, err)
	_, err = c.WaitLeader(ctx, in.Target())
	require.NoError(t, err)
	_, err = c.LinearizableRead(ctx, in.Target())
	assert.Error(t, err)
	require.NoError(t, n.UndoAll(ctx))
	assert.Empty(t, n.Active())
	require.NoError(t, c.WaitLinearizableRead(ctx, in.Target()))
	requirePaired(t, rec.all())
}

func TestPartitionAndMoveLeader(t *testing.T) {
	c, n, rec, ctx := setup(t)
	in, err := n.Apply(ctx, faults.Fault{Kind: faults.MoveLeader, Member: "m2"})
	require.NoError(t, err)
	l, err := c.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, "m2", l)
	require.NoError(t, in.Undo(ctx))

	p, err := n.Apply(ctx, faults.Fault{Kind: faults.Partition, Groups: [][]string{{"m2"}, {"m1", "m3"}}})
	require.NoError(t, err)
	_, err = c.WaitLeader(ctx, "m2")
	require.NoError(t, err)
	assert.Equal(t, "m2 | m1 m3", c.PartitionString())
	require.NoError(t, p.Undo(ctx))
	assert.Empty(t, c.PartitionString())
	requirePaired(t, rec.all())
}

// worker passes pause points until ctx ends, counting its rounds.
func worker(ctx context.Context, cl *cluster.Client, rounds chan<- int) {
	for i := 0; ; i++ {
		for _, p := range []string{"after-acquire", "before-write", "before-release"} {
			if cl.PausePoint(ctx, p) != nil {
				return
			}
		}
		select { // report progress without ever blocking on it
		case rounds <- i:
		default:
		}
	}
}

func TestPauseClient(t *testing.T) {
	c, n, rec, ctx := setup(t)
	cl, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	wctx, stop := context.WithCancel(ctx)
	rounds := make(chan int, 1)
	var wg sync.WaitGroup
	wg.Go(func() { worker(wctx, cl, rounds) })
	defer func() { stop(); wg.Wait() }()
	<-rounds

	in, err := n.Apply(ctx, faults.Fault{Kind: faults.PauseClient, Client: "c1", Point: "before-write"})
	require.NoError(t, err)
	assert.Equal(t, "before-write", in.Target())
	assert.True(t, cl.IsCut())
	select { // a round finished before the pause took hold
	case <-rounds:
	default:
	}
	select {
	case r := <-rounds:
		t.Fatalf("paused worker finished round %d", r)
	default:
	}
	require.NoError(t, in.Undo(ctx))
	assert.False(t, cl.IsCut())
	<-rounds // it goes on
	requirePaired(t, rec.all())
}

func TestExpireLease(t *testing.T) {
	for _, mode := range []string{faults.ModeLapse, faults.ModeRevoke} {
		t.Run(mode, func(t *testing.T) {
			c, n, rec, ctx := setup(t)
			c1, err := c.NewClient("c1", "m1")
			require.NoError(t, err)
			c2, err := c.NewClient("c2", "m1")
			require.NoError(t, err)
			s1, err := concurrency.NewSession(c1.Etcd(), concurrency.WithTTL(1))
			require.NoError(t, err)
			defer s1.Close()
			s2, err := concurrency.NewSession(c2.Etcd(), concurrency.WithTTL(1))
			require.NoError(t, err)
			defer s2.Close()
			c1.SetLease(s1.Lease())

			in, err := n.Apply(ctx, faults.Fault{Kind: faults.ExpireLease, Client: "c1", Mode: mode})
			require.NoError(t, err)
			alive, err := c.LeaseAlive(ctx, s1.Lease())
			require.NoError(t, err)
			assert.False(t, alive, "the server must have dropped c1's lease when Apply returns")
			alive, err = c.LeaseAlive(ctx, s2.Lease())
			require.NoError(t, err)
			assert.True(t, alive, "c2's lease is untouched")
			require.NoError(t, c.WaitLeaseGone(ctx, s1.Lease()))
			require.NoError(t, in.Undo(ctx))
			select {
			case <-s1.Done():
			case <-ctx.Done():
				t.Fatal("c1 must learn its session ended")
			}
			requirePaired(t, rec.all())
		})
	}
}

// Revoking a lease an earlier fault already ended (its client has not
// renewed yet) does what the fault asks — the lease is gone — and is no
// failure to apply.
func TestExpireLeaseAlreadyGone(t *testing.T) {
	c, n, _, ctx := setup(t)
	c1, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	s1, err := concurrency.NewSession(c1.Etcd(), concurrency.WithTTL(1))
	require.NoError(t, err)
	defer s1.Close()
	c1.SetLease(s1.Lease())
	_, err = c.Admin().Revoke(ctx, s1.Lease())
	require.NoError(t, err)
	in, err := n.Apply(ctx, faults.Fault{Kind: faults.ExpireLease, Client: "c1", Mode: faults.ModeRevoke})
	require.NoError(t, err)
	assert.Contains(t, in.Target(), "already gone")
}

func TestFailedApplyClosesItsWindow(t *testing.T) {
	c, n, rec, ctx := setup(t)
	_, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = n.Apply(short, faults.Fault{Kind: faults.PauseClient, Client: "c1", Point: "before-write"})
	require.ErrorIs(t, err, context.DeadlineExceeded, "no worker ever reaches the point")
	_, err = n.Apply(ctx, faults.Fault{Kind: faults.ExpireLease, Client: "c1", Mode: faults.ModeRevoke})
	assert.ErrorContains(t, err, "no lease recorded")
	_, err = n.Apply(ctx, faults.Fault{Kind: faults.CutClient, Client: "c9"})
	assert.ErrorIs(t, err, cluster.ErrUnknownClient)
	_, err = n.Apply(ctx, faults.Fault{Kind: faults.KillMember})
	assert.ErrorContains(t, err, "needs a member")

	ev := rec.all()
	require.Len(t, ev, 6, "three faults that reached the cluster, each opened and closed")
	for _, e := range ev {
		if e.Phase == faults.End {
			assert.Error(t, e.Err)
		}
	}
	requirePaired(t, ev)
	assert.Empty(t, n.Active())
}

func TestExternalClusterRefusesMemberFaults(t *testing.T) {
	owned, err := cluster.Start(t.Context(), cluster.Config{})
	require.NoError(t, err)
	defer owned.Close()
	ext, err := cluster.Connect(t.Context(), cluster.External{Endpoints: owned.Endpoints()})
	require.NoError(t, err)
	defer ext.Close()
	n := etcdfaults.New(ext, nil)
	for _, f := range []faults.Fault{
		{Kind: faults.KillLeader}, {Kind: faults.KillMember, Member: "m1"},
		{Kind: faults.Partition, Groups: [][]string{{"m1"}}}, {Kind: faults.IsolateMember, Member: "m1"},
	} {
		_, err := n.Apply(t.Context(), f)
		assert.ErrorIs(t, err, cluster.ErrExternal, f.String())
	}
	_, err = ext.NewClient("c1", "m1")
	require.NoError(t, err)
	in, err := n.Apply(t.Context(), faults.Fault{Kind: faults.CutClient, Client: "c1"})
	require.NoError(t, err, "client faults work on an external cluster")
	require.NoError(t, in.Undo(t.Context()))
}

func TestFaultsLandInTheHistory(t *testing.T) {
	c, err := cluster.Start(t.Context(), cluster.Config{})
	require.NoError(t, err)
	defer c.Close()
	mem := &history.Memory{}
	rec := history.NewRecorder(mem)
	n := etcdfaults.New(c, faults.ToHistory(rec))
	id := rec.Invoke("c1", history.Acquire, history.Event{Lock: "l"})
	in, err := n.Apply(t.Context(), faults.Fault{Kind: faults.IsolateLeader})
	require.NoError(t, err)
	rec.Complete(id, nil, history.Event{Token: 9})
	require.NoError(t, in.Undo(t.Context()))

	events := mem.Events()
	require.NoError(t, history.Validate(events), "one valid timeline")
	var kinds []history.Type
	for _, e := range events {
		kinds = append(kinds, e.Type)
	}
	assert.Equal(t, []history.Type{history.Invoke, history.FaultStart, history.Ok, history.FaultEnd}, kinds)
	assert.Equal(t, "isolate-leader", events[1].Fault)
	assert.Equal(t, in.Target(), events[3].Target)
}
