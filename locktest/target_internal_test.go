package locktest

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/redislock"
	"github.com/locklab/locklab/scenarios"
)

// The store a gate runs on follows from the factory's client, or from
// Store; a store that cannot run the lock is refused in one line.
func TestTheStoreFollowsTheFactory(t *testing.T) {
	var onRedis lock.Factory[[]*redis.Client] = redislock.NewSetNX
	tg, err := targetOf(config{}, onRedis)
	require.NoError(t, err)
	assert.Equal(t, "redis", tg.store)
	assert.Equal(t, scenarios.RedisLock, tg.kind())
	assert.Equal(t, []string{"fenced", "unfenced"}, defaultResources(tg))

	tg, err = targetOf(config{store: "redlock"}, onRedis)
	require.NoError(t, err)
	assert.Equal(t, scenarios.RedlockLock, tg.kind())

	tg, err = targetOf(config{}, etcdlock.NewQueue)
	require.NoError(t, err)
	assert.Equal(t, "etcd", tg.store)
	assert.Equal(t, []string{"fenced", "etcd-guarded"}, defaultResources(tg))

	for _, c := range []struct {
		err string
		tg  func() (target, error)
	}{
		{`Store("redis"): the lock is a lock.EtcdFactory, a lock on etcd`,
			func() (target, error) { return targetOf(config{store: "redis"}, etcdlock.NewQueue) }},
		{`Store("etcd"): the lock is a lock.Factory[[]*github.com/redis/go-redis/v9.Client], not a lock.EtcdFactory`,
			func() (target, error) { return targetOf(config{store: "etcd"}, onRedis) }},
		{`unknown store "zookeeper" (stores: etcd, redis, redlock)`,
			func() (target, error) { return targetOf(config{store: "zookeeper"}, onRedis) }},
		{"Endpoints: an etcd cluster of your own is for a lock on etcd",
			func() (target, error) { return targetOf(config{external: &cluster.External{}}, onRedis) }},
	} {
		_, err := c.tg()
		assert.EqualError(t, err, c.err)
	}
}
