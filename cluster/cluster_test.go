package cluster_test

import (
	"context"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/internal/poll"
)

// wait bounds every condition wait of these tests; conditions normally hold
// in well under a second.
const wait = 15 * time.Second

func start(t *testing.T, members int) *cluster.Cluster {
	t.Helper()
	dir := t.TempDir()
	c, err := cluster.Start(t.Context(), cluster.Config{Members: members, Dir: dir})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, c.Close())
		left, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, left, "Close must remove the data directories")
	})
	return c
}

func ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	t.Cleanup(cancel)
	return ctx
}

// other returns a member that is not name.
func other(c *cluster.Cluster, name string) string {
	for _, m := range c.Members() {
		if m != name {
			return m
		}
	}
	return ""
}

func TestStartSizes(t *testing.T) {
	for _, n := range []int{1, 3, 5} {
		c := start(t, n)
		assert.Len(t, c.Members(), n)
		leader, err := c.Leader(ctx(t))
		require.NoError(t, err)
		assert.Contains(t, c.Members(), leader)
		_, err = c.Admin().Put(ctx(t), "k", "v")
		require.NoError(t, err)
	}
}

func TestConcurrentClustersDoNotCollide(t *testing.T) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			c, err := cluster.Start(t.Context(), cluster.Config{})
			if assert.NoError(t, err) {
				_, err = c.Admin().Put(t.Context(), "k", "v")
				assert.NoError(t, err)
				assert.NoError(t, c.Close())
			}
		})
	}
	wg.Wait()
}

func TestMinorityPartition(t *testing.T) {
	c := start(t, 3)
	ctx := ctx(t)
	leader, err := c.WaitLeader(ctx)
	require.NoError(t, err)
	majority := other(c, leader)

	require.NoError(t, c.Partition([]string{leader}))
	assert.Contains(t, c.PartitionString(), leader+" | ")
	newLeader, err := c.WaitLeader(ctx, leader)
	require.NoError(t, err)
	assert.NotEqual(t, leader, newLeader)
	assert.Eventually(t, func() bool {
		var without []string
		for _, v := range c.LeaderViews(ctx) {
			if !v.Follows {
				without = append(without, v.Member)
			}
		}
		return slices.Equal(without, []string{leader})
	}, 10*time.Second, 10*time.Millisecond, "the isolated member steps down and follows no leader")

	writer, err := c.NewClient("c1", majority)
	require.NoError(t, err)
	_, err = writer.Etcd().Put(ctx, "k", "majority")
	require.NoError(t, err, "the majority must keep accepting writes")

	_, err = c.LinearizableRead(ctx, leader)
	require.Error(t, err, "the isolated member must not serve a linearizable read")

	require.NoError(t, c.Heal())
	require.NoError(t, c.WaitLinearizableRead(ctx, leader))
	resp, err := c.Get(ctx, leader, "k")
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1)
	assert.Equal(t, "majority", string(resp.Kvs[0].Value))
}

func TestPartitionValidation(t *testing.T) {
	c := start(t, 3)
	assert.ErrorIs(t, c.Partition([]string{"m9"}), cluster.ErrUnknownMember)
	assert.ErrorContains(t, c.Partition([]string{"m1"}, []string{"m1", "m2"}), "two groups")
	assert.ErrorContains(t, c.Partition([]string{"m1", "m2", "m3"}), "one group")
}

func TestKillLeaderAndRestart(t *testing.T) {
	c := start(t, 3)
	ctx := ctx(t)
	leader, err := c.WaitLeader(ctx)
	require.NoError(t, err)
	_, err = c.Admin().Put(ctx, "before", "1")
	require.NoError(t, err)
	term, err := c.Term(ctx)
	require.NoError(t, err)

	killed := time.Now()
	require.NoError(t, c.Kill(leader))
	assert.False(t, c.Running(leader))
	newLeader, err := c.WaitLeader(ctx, leader)
	require.NoError(t, err)
	t.Logf("new leader %s %v after killing %s", newLeader, time.Since(killed), leader)
	// Each member takes the new term in as it processes the election, a
	// step that may trail its view of the leader: wait to see it.
	var after uint64
	err = poll.Until(ctx, "the term to grow", 10*time.Millisecond, func(ctx context.Context) (bool, error) {
		after, err = c.Term(ctx)
		return after > term, err
	})
	require.NoError(t, err, "an election raises the term (%d before, %d after)", term, after)

	cl, err := c.NewClient("c1", newLeader)
	require.NoError(t, err)
	_, err = cl.Etcd().Put(ctx, "after", "2")
	require.NoError(t, err, "writes must succeed under the new leader")

	require.NoError(t, c.Restart(ctx, leader))
	require.NoError(t, c.WaitLinearizableRead(ctx, leader))
	for _, key := range []string{"before", "after"} {
		resp, err := c.Get(ctx, leader, key)
		require.NoError(t, err)
		assert.Len(t, resp.Kvs, 1, "restarted member must have %q", key)
	}
}

func TestClientReconnectsAfterMemberRestart(t *testing.T) {
	c := start(t, 3)
	ctx := ctx(t)
	cl, err := c.NewClient("c1", "m2")
	require.NoError(t, err)
	_, err = cl.Etcd().Put(ctx, "k", "1")
	require.NoError(t, err)
	require.NoError(t, c.Kill("m2"))
	require.NoError(t, c.Restart(ctx, "m2"))
	_, err = cl.Etcd().Put(ctx, "k", "2")
	require.NoError(t, err, "a client of a restarted member must reach it again")
}

func TestPartitionHoldsAcrossRestart(t *testing.T) {
	c := start(t, 3)
	ctx := ctx(t)
	leader, err := c.WaitLeader(ctx)
	require.NoError(t, err)
	isolated := other(c, leader) // keep the leader in the majority
	require.NoError(t, c.Partition([]string{isolated}))
	require.NoError(t, c.Kill(isolated))
	require.NoError(t, c.Restart(ctx, isolated))
	_, err = c.LinearizableRead(ctx, isolated)
	require.Error(t, err, "a restarted member must stay cut off")
	require.NoError(t, c.Heal())
	require.NoError(t, c.WaitLinearizableRead(ctx, isolated))
}

// Partitions replace each other and heals repeat, each peer link cut and
// mended at most once in turn: etcd's MendPeer of a link not cut starts
// its sending pipeline again, and the next CutPeer of it then waits for
// ever (seen as a run hung in Partition under load).
func TestPartitionsReplaceAndHealsRepeat(t *testing.T) {
	c := start(t, 3)
	ctx := ctx(t)
	require.NoError(t, c.Heal(), "healing what was never cut")
	require.NoError(t, c.Partition([]string{"m1"}))
	require.NoError(t, c.Partition([]string{"m1"}), "the same partition again")
	require.NoError(t, c.Partition([]string{"m2"}), "another in its place")
	_, err := c.LinearizableRead(ctx, "m2")
	require.Error(t, err, "m2 is cut off")
	require.NoError(t, c.WaitLinearizableRead(ctx, "m1"), "m1 is back with m3")
	require.NoError(t, c.Heal())
	require.NoError(t, c.Heal())
	require.NoError(t, c.WaitLinearizableRead(ctx, "m2"))
}

func TestMoveLeader(t *testing.T) {
	c := start(t, 3)
	ctx := ctx(t)
	leader, err := c.WaitLeader(ctx)
	require.NoError(t, err)
	to := other(c, leader)
	require.NoError(t, c.MoveLeader(ctx, to))
	now, err := c.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, to, now)
}

func TestCutClientLosesLeaseOtherSurvives(t *testing.T) {
	c := start(t, 3)
	ctx := ctx(t)
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
	grants := c1.LeaseGrants()
	require.Len(t, grants, 1, "the client notes every lease granted through it")
	assert.Equal(t, s1.Lease(), grants[0].ID)
	assert.Equal(t, time.Second, grants[0].TTL, "the grant's answer says the TTL granted")

	cut := time.Now()
	c1.Cut()
	require.NoError(t, c.WaitLeaseGone(ctx, s1.Lease()))
	t.Logf("lease gone on the server %v after the cut (TTL 1 s)", time.Since(cut))
	alive, err := c.LeaseAlive(ctx, s2.Lease())
	require.NoError(t, err)
	assert.True(t, alive, "c2's lease on the same member must survive")
	select {
	case <-s1.Done():
		t.Log("c1's session already reported done while cut")
	default:
	}

	c1.Heal()
	select {
	case <-s1.Done():
	case <-ctx.Done():
		t.Fatal("after healing, c1 must learn its session is gone")
	}
	alive, err = c.LeaseAlive(ctx, s2.Lease())
	require.NoError(t, err)
	assert.True(t, alive)
}

func TestDelayedClient(t *testing.T) {
	c := start(t, 1)
	cl, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	_, err = cl.Etcd().Put(ctx(t), "k", "v") // connect first
	require.NoError(t, err)
	cl.SetDelay(100 * time.Millisecond)
	t0 := time.Now()
	_, err = cl.Etcd().Get(ctx(t), "k")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(t0), 200*time.Millisecond, "a round trip crosses the delay twice")
}

func TestPauseStopsWorkerAndCutsLink(t *testing.T) {
	c := start(t, 1)
	cl, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	require.NoError(t, cl.Arm("before-write"), "armed before the worker starts, so it cannot slip past")
	passed := make(chan string, 10)
	done := make(chan struct{})
	go func() { // a worker passing two pause points
		defer close(done)
		for _, p := range []string{"after-acquire", "before-write", "before-release"} {
			if err := cl.PausePoint(t.Context(), p); err != nil {
				return
			}
			passed <- p
		}
	}()
	at, err := cl.WaitPaused(ctx(t))
	require.NoError(t, err)
	assert.Equal(t, "before-write", at)
	assert.Equal(t, "before-write", cl.Paused())
	at, err = cl.Pause(ctx(t), "before-write")
	require.NoError(t, err, "pausing again where it already stopped changes nothing")
	assert.Equal(t, "before-write", at)
	_, err = cl.Pause(ctx(t), "after-acquire")
	assert.ErrorContains(t, err, "already paused")
	assert.True(t, cl.IsCut(), "a paused client's link is cut")
	assert.Equal(t, "after-acquire", <-passed)
	select {
	case p := <-passed:
		t.Fatalf("worker passed %s while paused", p)
	default:
	}
	cl.Resume()
	assert.False(t, cl.IsCut())
	assert.Equal(t, "before-write", <-passed)
	assert.Equal(t, "before-release", <-passed)
	<-done
	assert.Empty(t, cl.Paused())
}

func TestPauseTimesOutWhenPointNeverReached(t *testing.T) {
	c := start(t, 1)
	cl, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = cl.Pause(short, "before-write")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, "before-write")
	assert.False(t, cl.IsCut())
	require.NoError(t, cl.PausePoint(t.Context(), "before-write"), "a withdrawn pause must not stop the worker")
}

func TestExternalMode(t *testing.T) {
	owned := start(t, 3)
	ctx := ctx(t)
	ext, err := cluster.Connect(ctx, cluster.External{Endpoints: owned.Endpoints()})
	require.NoError(t, err)
	defer ext.Close()
	assert.True(t, ext.IsExternal())

	leader, err := ext.Leader(ctx)
	require.NoError(t, err)
	ownedLeader, err := owned.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, ownedLeader, leader, "both views name members in endpoint order")

	c1, err := ext.NewClient("c1", "m2")
	require.NoError(t, err)
	_, err = c1.Etcd().Put(ctx, "k", "v")
	require.NoError(t, err)
	lease, err := c1.Etcd().Grant(ctx, 1)
	require.NoError(t, err)
	c1.Cut() // client faults still work: the lab's proxy carries the link
	require.NoError(t, ext.WaitLeaseGone(ctx, lease.ID))
	c1.Heal()

	assert.ErrorIs(t, ext.Kill("m1"), cluster.ErrExternal)
	assert.ErrorIs(t, ext.Restart(ctx, "m1"), cluster.ErrExternal)
	assert.ErrorIs(t, ext.Partition([]string{"m1"}), cluster.ErrExternal)
	assert.ErrorIs(t, ext.MoveLeader(ctx, "m1"), cluster.ErrExternal)
	assert.ErrorContains(t, ext.Kill("m1"), "not available on an external cluster")
}

func TestExternalUnreachable(t *testing.T) {
	c := start(t, 1)
	ep := c.Endpoints()[0]
	require.NoError(t, c.Kill("m1"))
	short, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	_, err := cluster.Connect(short, cluster.External{Endpoints: []string{ep}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot reach etcd at "+ep)

	_, err = cluster.Connect(short, cluster.External{Endpoints: []string{"no-port"}})
	assert.ErrorContains(t, err, `endpoint "http://no-port"`)
}

func TestUnknownNames(t *testing.T) {
	c := start(t, 1)
	assert.ErrorIs(t, c.Kill("m7"), cluster.ErrUnknownMember)
	_, err := c.NewClient("c1", "m7")
	assert.ErrorIs(t, err, cluster.ErrUnknownMember)
	_, err = c.Client("nobody")
	assert.ErrorIs(t, err, cluster.ErrUnknownClient)
	_, err = c.NewClient("c1", "m1")
	require.NoError(t, err)
	_, err = c.NewClient("c1", "m1")
	assert.ErrorContains(t, err, "exists")
}

func TestExternalModeWithAuth(t *testing.T) {
	owned := start(t, 1)
	ctx := ctx(t)
	a := owned.Admin()
	_, err := a.UserAdd(ctx, "root", "secret")
	require.NoError(t, err)
	_, err = a.UserGrantRole(ctx, "root", "root")
	require.NoError(t, err)
	_, err = a.AuthEnable(ctx)
	require.NoError(t, err)

	ext, err := cluster.Connect(ctx, cluster.External{Endpoints: owned.Endpoints(), Username: "root", Password: "secret"})
	require.NoError(t, err)
	defer ext.Close()
	cl, err := ext.NewClient("c1", "m1")
	require.NoError(t, err)
	_, err = cl.Etcd().Put(ctx, "k", "v")
	require.NoError(t, err, "credentials reach the cluster through the lab's proxy")

	_, err = cluster.Connect(ctx, cluster.External{Endpoints: owned.Endpoints()})
	require.Error(t, err, "without credentials Connect must refuse")
	assert.ErrorContains(t, err, "cannot reach etcd at "+owned.Endpoints()[0])
	assert.ErrorContains(t, err, "user name is empty")
}

func TestCloseLeavesNothingListening(t *testing.T) {
	c, err := cluster.Start(t.Context(), cluster.Config{})
	require.NoError(t, err)
	cl, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	_, err = cl.Etcd().Put(t.Context(), "k", "v")
	require.NoError(t, err)
	eps := c.Endpoints()
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "Close twice is fine")
	for _, ep := range eps {
		conn, err := net.Dial("tcp", strings.TrimPrefix(ep, "http://"))
		if err == nil {
			conn.Close()
		}
		assert.Error(t, err, "%s still accepts connections after Close", ep)
	}
	_, err = c.NewClient("c2", "m1")
	assert.ErrorIs(t, err, cluster.ErrClosed)
}
