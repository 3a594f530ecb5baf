package etcdlock_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
)

// Healthy, stale-reentry keeps its promise: a member answers a client's
// write only once it has applied it, so a client that released reads its
// own release there and asks anew — it never re-enters a grant it gave
// back. Its bug needs a member cut off from the quorum (isolated-asks).
func TestStaleReentryIsExclusiveWhileHealthy(t *testing.T) {
	t.Parallel() // on a cluster of its own
	c := start(t)
	var (
		inside atomic.Int32
		wg     sync.WaitGroup
	)
	for i, m := range c.Members() {
		cl, err := c.NewClient(fmt.Sprintf("s%d", i+1), m)
		require.NoError(t, err)
		l, err := etcdlock.NewStaleReentry(cl.Etcd(), "sr", lock.Options{TTL: 1})
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		wg.Go(func() {
			var last int64
			for range 30 {
				g, err := l.Acquire(ctx(t))
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, int32(1), inside.Add(1), "two holders at once")
				assert.Greater(t, g.Token, last, "re-entered a grant it had released")
				last = g.Token
				inside.Add(-1)
				assert.NoError(t, l.Release(ctx(t), g))
			}
		})
	}
	wg.Wait()
}
