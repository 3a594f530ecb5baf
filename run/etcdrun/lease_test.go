package etcdrun

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
)

// The sweep and a fault learn a client's lease grants at once: each takes
// every grant in, in order, whichever looks last — none is lost and
// neither reads past the other's copy of the list.
func TestLearnersAtOnceTakeInEveryGrant(t *testing.T) {
	c, err := cluster.Start(t.Context(), cluster.Config{Members: 1, TickMs: 50, ElectionMs: 500})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	f := func(cli *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
		return etcdlock.NewMutex(cli, name, opts)
	}
	ctx := t.Context()
	e, err := New(Config{Cluster: c, Factory: f, TTL: 5, RunID: "learners", Resource: []string{"unfenced"}})
	require.NoError(t, err)
	e.Bind(ctx)
	t.Cleanup(func() { assert.NoError(t, e.Close()) })
	require.NoError(t, e.AddClient(ctx, "c1", "m1"))
	cl, err := c.Client(e.clientName("c1"))
	require.NoError(t, err)

	const grants = 40
	var granted []clientv3.LeaseID
	done := make(chan struct{})
	var learners sync.WaitGroup
	for range 4 {
		learners.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
					e.learn("c1")
				}
			}
		})
	}
	for range grants {
		r, err := cl.Etcd().Grant(ctx, 5)
		require.NoError(t, err)
		granted = append(granted, r.ID)
	}
	close(done)
	learners.Wait()
	e.learn("c1")
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, id := range granted {
		assert.Equal(t, "c1", e.leases[int64(id)], "lease %x was granted through c1's link", id)
	}
	assert.Equal(t, len(cl.LeaseGrants()), e.learned["c1"])
}
