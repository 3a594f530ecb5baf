package locktest

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/redislock"
)

// The store a gate runs on follows from the factory's client, or from
// Store; a store that cannot run the lock is refused in one line.
func TestTheStoreFollowsTheFactory(t *testing.T) {
	var onRedis lock.Factory[[]*redis.Client] = redislock.NewSetNX
	tg, err := targetOf(config{}, onRedis)
	require.NoError(t, err)
	assert.Equal(t, "redis", tg.store)
	assert.Equal(t, "redis", tg.kind().Name)
	assert.Equal(t, []string{"fenced", "redis-guarded"}, defaultResources(tg))

	tg, err = targetOf(config{store: "redlock"}, onRedis)
	require.NoError(t, err)
	assert.Equal(t, "redlock", tg.kind().Name)

	tg, err = targetOf(config{}, etcdlock.NewQueue)
	require.NoError(t, err)
	assert.Equal(t, "etcd", tg.store)
	assert.Equal(t, []string{"fenced", "etcd-guarded"}, defaultResources(tg))

	for _, c := range []struct {
		err string
		tg  func() (target, error)
	}{
		{"the redis store takes a lock.Factory[[]*redis.Client], not a lock.Factory[*go.etcd.io/etcd/client/v3.Client]",
			func() (target, error) { return targetOf(config{store: "redis"}, etcdlock.NewQueue) }},
		{"the etcd store takes an etcdlock.Factory, not a lock.Factory[[]*github.com/redis/go-redis/v9.Client]",
			func() (target, error) { return targetOf(config{store: "etcd"}, onRedis) }},
		{`unknown store "nosuch" (stores: etcd, postgres, redis, redlock, zookeeper): a program links a store by importing its ` +
			`package, as import _ "github.com/locklab/locklab/scenarios/redisstore" does Redis's`,
			func() (target, error) { return targetOf(config{store: "nosuch"}, onRedis) }},
		{"the zookeeper store takes a lock.Factory[*zk.Conn], not a lock.Factory[[]*github.com/redis/go-redis/v9.Client]",
			func() (target, error) { return targetOf(config{store: "zookeeper"}, onRedis) }},
		{"Endpoints: an etcd cluster of your own is for a lock on etcd, not on one Redis primary",
			func() (target, error) { return targetOf(config{external: &cluster.External{}}, onRedis) }},
	} {
		_, err := c.tg()
		assert.EqualError(t, err, c.err)
	}
}

// A lock on Redis is explored as one on etcd is: drawn scripts of the
// faults that are not etcd's own, each case on a Redis started for it,
// kept safe on the fenced store and on redis-guarded; a lock with no
// token is held to redis-guarded alone (its grant's value guards the
// write). On Redlock's masters, which guard nothing, such a lock has
// nothing the exploration can hold it to, and it says so.
func TestARedisLockIsExplored(t *testing.T) {
	if _, err := redisd.Find(); err != nil {
		t.Skipf("%v (apt-get install redis-server)", err)
	}
	var watchdog lock.Factory[[]*redis.Client] = redislock.NewWatchdog
	tg, err := targetOf(config{}, watchdog)
	require.NoError(t, err)
	cfg := config{resources: defaultResources(tg), cases: 3, seed: 1}
	assert.Empty(t, exploreLeftOut(cfg, tg))
	assert.Equal(t, []string{"fenced", "redis-guarded"}, safeOn(cfg, tg))
	assert.Equal(t, 1, runExplore(t, newGate(), cfg, tg))

	tg.tokenless = true
	assert.Empty(t, exploreLeftOut(cfg, tg))
	assert.Equal(t, []string{"redis-guarded"}, safeOn(cfg, tg))

	tg, err = targetOf(config{store: "redlock"}, watchdog)
	require.NoError(t, err)
	tg.tokenless = true
	cfg.resources = defaultResources(tg)
	assert.Contains(t, exploreLeftOut(cfg, tg), "carry no fencing token")
}
