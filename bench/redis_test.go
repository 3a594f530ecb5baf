package bench_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/lock/redislock"
)

// The Redis locks are measured as the etcd ones are: every grant counted,
// one holder at a time, the polling waiters' tries as wake-ups, the
// servers' CPU apart from the clients'.
func TestRunRedisMeasuresTheRedisLocks(t *testing.T) {
	if _, err := redisd.Find(); err != nil {
		t.Skipf("%v: the Redis locks were not measured (.ci/run installs it)", err)
	}
	for _, name := range redislock.Names() {
		l, err := redislock.Find(name)
		require.NoError(t, err)
		f, masters := l.Factory, l.Masters
		var s *redisd.Set
		if masters > 0 {
			s, err = redisd.StartIndependent(t.Context(), masters, redisd.Options{})
		} else {
			s, err = redisd.StartReplicated(t.Context(), 2, redisd.Options{})
		}
		require.NoError(t, err)
		res, err := bench.RunRedis(t.Context(), s, bench.Config{Lock: name, Redis: f, Masters: masters > 0, Clients: 4,
			Acquires: 40, ClusterCPU: func() (d time.Duration, err error) { return s.CPU(t.Context()) }})
		require.NoError(t, err, name)
		assert.Equal(t, 40, res.Acquires, name)
		assert.Positive(t, res.LocksPerSec, name)
		assert.Positive(t, res.Wakeups, "%s: contending pollers try again", name)
		assert.Positive(t, res.Requests, name)
		floor, err := bench.RedisFloor(t.Context(), s, 20)
		require.NoError(t, err)
		assert.Positive(t, floor.P50)
		require.NoError(t, s.Close())
	}
}
