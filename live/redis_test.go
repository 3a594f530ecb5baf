package live_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/live"
	"github.com/locklab/locklab/scenarios"
	_ "github.com/locklab/locklab/scenarios/redisstore" // the Redis locks
)

// A lab of Redis locks steps through the failover lesson on Redis started
// for its run — a replica promoted grants c1's lock to c2 — to the
// lesson's verdicts; an etcd lesson is refused, and starting again starts
// a Redis of its own once more.
func TestALabOnRedisServesTheFailoverLesson(t *testing.T) {
	if _, err := redisd.Find(); err != nil {
		t.Skipf("live lab on Redis: %v", err)
	}
	lab, err := live.New(live.Config{Store: live.BackendStore([]string{"redis-setnx", "redis-del"}, redisKind(t), 3),
		Lock: "redis-setnx"})
	require.NoError(t, err)
	t.Cleanup(func() { lab.Close() })
	assert.ErrorContains(t, lab.Load("lost-request"), "lost-request needs a store that can lose the request after an acquire's write (acquire next=lost), which a lock on one Redis primary cannot")
	require.NoError(t, lab.Load("failover"))
	for {
		if _, ok := lab.Next(t.Context()); !ok {
			break
		}
	}
	s := lab.State()
	assert.Equal(t, []string{"redis-del", "redis-setnx"}, s.Locks)
	verdict := map[string]string{}
	for _, r := range s.Resources {
		verdict[r.Name] = r.Result
	}
	assert.Equal(t, map[string]string{"unfenced": "FAIL", "fenced": "FAIL", "redis-guarded": "FAIL"}, verdict,
		"the lesson's verdicts: %+v", s.Steps)
	assert.Contains(t, lab.Save(), "setup members=3 ttl=1")

	require.NoError(t, lab.Reset("redis-del"))
	out, err := lab.Do(t.Context(), "client c1 member=m1")
	require.NoError(t, err)
	assert.Equal(t, "c1: connected to m1", out)
	assert.Error(t, lab.Reset("etcd-mutex"), "the lab's locks are Redis's")
}

// redisKind is the kind of the Redis locks on one primary.
func redisKind(t *testing.T) scenarios.StoreKind {
	t.Helper()
	k, ok := scenarios.KindOf("redis-setnx")
	require.True(t, ok, "scenarios/redisstore is linked")
	return k
}
