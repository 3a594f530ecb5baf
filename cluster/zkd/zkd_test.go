package zkd_test

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/internal/clockshim"
	"github.com/locklab/locklab/internal/poll"
)

// start starts an ensemble of n, or skips where ZooKeeper is missing.
func start(t *testing.T, n int, opts ...zkd.Options) *zkd.Ensemble {
	t.Helper()
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("%v: the ZooKeeper store was not tried (.ci/run installs it)", err)
	}
	e, err := zkd.Start(t.Context(), n, append(opts, zkd.Options{})[0])
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.Close()) })
	return e
}

// A session the server ends when its client's link is cut for longer than
// its timeout: the leader's view says so, as etcd says a lease is gone.
func TestASessionCutOffEndsOnTheServer(t *testing.T) {
	e := start(t, 3)
	assert.Equal(t, []string{"z1", "z2", "z3"}, e.Names())
	link, err := e.Link(0)
	require.NoError(t, err)
	c, _, err := zk.Connect([]string{link.Addr()}, time.Second, zk.WithLogger(zkd.Silent{}))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Create("/x", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	ctx := t.Context()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// One reading can miss a session the leader is moving between expiry
	// buckets: it is listed within a few.
	require.NoError(t, poll.Until(wctx, "the leader to list the session", 20*time.Millisecond, func(ctx context.Context) (bool, error) {
		return e.SessionAlive(ctx, c.SessionID())
	}))
	link.Cut()
	require.NoError(t, poll.Until(wctx, "the session and its node to end", 20*time.Millisecond, func(ctx context.Context) (bool, error) {
		ok, _, err := e.Admin().Exists("/x")
		if err != nil || ok {
			return false, err
		}
		alive, err := e.SessionAlive(ctx, c.SessionID())
		return !alive, err
	}))
}

// Every server's wall clock jumps a minute forward, then back: a session
// that its client keeps alive lives on, its ephemeral node with it —
// ZooKeeper times sessions on a monotonic clock. (An absence is watched
// for: a watch on the node, for three of its session's timeouts after each
// jump.)
func TestASessionOutlivesClockJumps(t *testing.T) {
	if _, err := clockshim.Build(t.Context()); err != nil {
		t.Skipf("%v", err)
	}
	e := start(t, 3, zkd.Options{Clocks: true})
	c, _, err := zk.Connect(e.Addrs(), time.Second, zk.WithLogger(zkd.Silent{}))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Create("/held", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	for _, jump := range []time.Duration{time.Minute, -2 * time.Minute} {
		for i := range e.Names() {
			require.NoError(t, e.JumpClock(i, jump))
		}
		// The servers' own clock moved: a node's ctime is the leader's.
		path, err := e.Admin().Create("/stamp", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
		_, stat, err := e.Admin().Get(path)
		require.NoError(t, err)
		assert.InDelta(t, e.ClockOffset(0).Seconds(), time.Until(time.UnixMilli(stat.Ctime)).Seconds(), 5,
			"the node's ctime, by the leader's clock")
		// A watch on the node fires the moment its session takes it away;
		// none may fire for three of the session's timeouts.
		ok, _, gone, err := e.Admin().ExistsW("/held")
		require.NoError(t, err)
		require.True(t, ok, "the node went with its session at a %v jump", jump)
		select {
		case ev := <-gone:
			t.Fatalf("after a %v jump: %v on the node (its session's end)", jump, ev.Type)
		case <-time.After(3 * time.Second):
		}
	}
	assert.Equal(t, -time.Minute, e.ClockOffset(0))
}

// A killed leader is followed by another; started again, it serves.
func TestAKilledLeaderIsReplaced(t *testing.T) {
	e := start(t, 3)
	ctx := t.Context()
	l := e.Leader(ctx)
	require.GreaterOrEqual(t, l, 0)
	e.Kill(l)
	// Under a second (0.4–1 s here): the new leader's followers reach it
	// through links that wait for it to listen (quorumRedial). Without
	// that, 10–12 s: a follower that met a closed link gave up following,
	// and the leader waited out its initLimit. A bound, not a timing.
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	require.NoError(t, poll.Until(wctx, "a new leader", 20*time.Millisecond, func(ctx context.Context) (bool, error) {
		n := e.Leader(ctx)
		return n >= 0 && n != l, nil
	}))
	require.NoError(t, e.Restart(ctx, l))
	e.Isolate(l)
	e.HealPeers()
}

// Close leaves no directory behind, nor does a server killed first (a
// JVM's perf-data file under /tmp/hsperfdata_<user> outlives a JVM that
// is killed).
func TestCloseRemovesEverything(t *testing.T) {
	if _, _, err := zkd.Find(); err != nil {
		t.Skip(err)
	}
	u, err := user.Current()
	require.NoError(t, err)
	perf := filepath.Join(os.TempDir(), "hsperfdata_"+u.Username)
	before, _ := os.ReadDir(perf)
	e, err := zkd.Start(t.Context(), 1, zkd.Options{})
	require.NoError(t, err)
	dirs := e.Addrs()
	require.Len(t, dirs, 1)
	e.Kill(0)
	require.NoError(t, e.Close())
	after, _ := os.ReadDir(perf)
	assert.LessOrEqual(t, len(after), len(before), "a killed server left its perf data in %s", perf)
	require.NoError(t, e.Close(), "twice is once")
	_, err = os.Stat(e.Root())
	assert.True(t, os.IsNotExist(err), "its directory is gone")
}
