package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locklab/locklab/cluster"
)

// A crashed client gives up nothing: its lease and the key on it stay on
// the server, alive, until the lease runs out for want of keep-alives —
// nothing it had under way gets out, and a worker stopped at a pause point
// goes on with ErrCrashed, never to its write. It comes back with a new
// connection that works.
func TestCrashGivesUpNothing(t *testing.T) {
	c := start(t, 3)
	ctx := ctx(t)
	cl, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	old := cl.Etcd()
	s, err := concurrency.NewSession(old, concurrency.WithTTL(1))
	require.NoError(t, err)
	_, err = old.Put(ctx, "held", "by c1", clientv3.WithLease(s.Lease()))
	require.NoError(t, err)

	hooked := false
	cl.OnCrash(func() {
		hooked = true
		assert.True(t, cl.IsCut(), "the hook runs with the link cut: nothing of the dying client gets out")
	})
	require.NoError(t, cl.Arm("before-write"))
	stopped := make(chan error, 1)
	go func() { stopped <- cl.PausePoint(t.Context(), "before-write") }()
	_, err = cl.WaitPaused(ctx)
	require.NoError(t, err)

	require.NoError(t, cl.Crash())
	assert.True(t, hooked)
	require.ErrorIs(t, <-stopped, cluster.ErrCrashed, "a stopped worker dies where it stood")
	assert.False(t, cl.IsCut(), "the restarted client's link works")
	assert.NotSame(t, old, cl.Etcd(), "a new connection")

	alive, err := c.LeaseAlive(ctx, s.Lease())
	require.NoError(t, err)
	assert.True(t, alive, "a crash revokes nothing")
	resp, err := c.Admin().Get(ctx, "held")
	require.NoError(t, err)
	assert.Len(t, resp.Kvs, 1, "its key stays")
	require.NoError(t, c.WaitLeaseGone(ctx, s.Lease()), "nothing keeps the dead client's lease alive")
	s.Close()

	_, err = cl.Etcd().Put(ctx, "after", "restart")
	require.NoError(t, err, "the restarted client works")

	// A pause armed but not reached when the client crashes is not waited
	// for in vain: whoever waits hears of the crash (or, come later, that
	// no pause is armed), and the worker does not stop there any more.
	require.NoError(t, cl.Arm("before-release"))
	waited := make(chan error, 1)
	go func() {
		_, err := cl.WaitPaused(ctx)
		waited <- err
	}()
	require.NoError(t, cl.Crash())
	require.Error(t, <-waited)
	require.NoError(t, cl.PausePoint(t.Context(), "before-release"), "the pause went with the crash")
}
