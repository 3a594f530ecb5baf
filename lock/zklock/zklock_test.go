package zklock_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/zklock"
)

// The recipe hands the lock over in turn, each grant's token the zxid of
// its node, higher than the last; a waiter that gives up takes nothing.
func TestTheRecipeHandsTheLockOverInTurn(t *testing.T) {
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("%v: the ZooKeeper locks were not tried (.ci/run installs it)", err)
	}
	e, err := zkd.Start(t.Context(), 1, zkd.Options{})
	require.NoError(t, err)
	defer e.Close()
	l, err := zklock.Find("zk-lock")
	require.NoError(t, err)
	var lockers []lock.Locker
	for range 2 {
		c, _, err := zk.Connect(e.Addrs(), 2*time.Second, zk.WithLogger(zkd.Silent{}))
		require.NoError(t, err)
		defer c.Close()
		lk, err := l.Factory(c, "lock", lock.Options{Prefix: "test/"})
		require.NoError(t, err)
		lockers = append(lockers, lk)
	}
	ctx := t.Context()
	g1, err := lockers[0].Acquire(ctx)
	require.NoError(t, err)
	assert.Contains(t, g1.Key, "/test/lock/")
	assert.Positive(t, g1.Token)
	assert.NotZero(t, g1.Lease, "the session owning the node")
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = lockers[1].Acquire(wctx)
	cancel()
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, lockers[0].Release(ctx, g1))
	assert.ErrorIs(t, lockers[0].Release(ctx, g1), lock.ErrNotHeld)
	g2, err := lockers[1].Acquire(ctx)
	require.NoError(t, err)
	assert.Greater(t, g2.Token, g1.Token)
	require.NoError(t, lockers[1].Release(ctx, g2))
	_, err = zklock.Find("nope")
	assert.ErrorIs(t, err, zklock.ErrUnknownLock)
}
