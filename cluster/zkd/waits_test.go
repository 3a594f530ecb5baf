package zkd_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/internal/poll"
)

// A client waits on its connection once every request it sent is
// answered and the latest set a watch — on a node or on a node's
// children — and not while a request is under way or after a read that
// set none.
func TestAClientWaitsOnceItsWatchIsSet(t *testing.T) {
	e := start(t, 1)
	link, err := e.Link(0)
	require.NoError(t, err)
	var latest atomic.Pointer[func() bool] // the connection's, once it is made
	link.SetTap(func() (func([]byte), func([]byte)) {
		requests, answers, waiting := zkd.Waits()
		latest.Store(&waiting)
		return requests, answers
	})
	waiting := func() bool { w := latest.Load(); return w != nil && (*w)() }
	c, _, err := zk.Connect([]string{link.Addr()}, time.Second, zk.WithLogger(zkd.Silent{}))
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	waits := func(want bool) {
		t.Helper()
		require.NoError(t, poll.Until(ctx, "the client's waiting to be read", 10*time.Millisecond,
			func(context.Context) (bool, error) { return waiting() == want, nil }))
	}
	_, err = c.Create("/w", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, _, err = c.Get("/w")
	require.NoError(t, err)
	assert.False(t, waiting(), "a read that set no watch")
	_, _, _, err = c.ChildrenW("/w")
	require.NoError(t, err)
	waits(true)
	_, _, _, err = c.GetW("/w")
	require.NoError(t, err)
	waits(true)
	_, err = c.Create("/w/x", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	assert.False(t, waiting(), "a create")
}
