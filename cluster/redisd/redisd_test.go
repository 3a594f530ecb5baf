package redisd_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/internal/clockshim"
)

// needRedis skips a test where redis-server is not installed, saying how
// to install it.
func needRedis(t *testing.T) {
	t.Helper()
	if _, err := redisd.Find(); err != nil {
		t.Skipf("%v: the Redis store was not tried (.ci/run installs it)", err)
	}
}

// client is a go-redis client through addr (a proxy), closed with the test.
func client(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// A primary's write reaches its replicas; a replica refuses writes.
func TestAReplicaGetsThePrimarysWrites(t *testing.T) {
	needRedis(t)
	ctx := t.Context()
	s, err := redisd.StartReplicated(ctx, 2, redisd.Options{})
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, []string{"r1", "r2", "r3"}, s.Names())
	assert.Equal(t, 0, s.Primary())

	link, err := s.Link(0)
	require.NoError(t, err)
	// WAIT counts the replicas that have the writes of its own connection.
	conn := client(t, link.Addr()).Conn()
	defer conn.Close()
	require.NoError(t, conn.Set(ctx, "lock", "c1", 10*time.Second).Err())
	n, err := conn.Wait(ctx, 2, 5*time.Second).Result()
	require.NoError(t, err)
	assert.EqualValues(t, 2, n, "both replicas acknowledged the write")
	for _, i := range []int{1, 2} {
		v, err := s.Admin(i).Get(ctx, "lock").Result()
		require.NoError(t, err)
		assert.Equal(t, "c1", v)
		role, up, err := s.Role(ctx, i)
		require.NoError(t, err)
		assert.Equal(t, "slave", role)
		assert.True(t, up)
	}
	err = s.Admin(1).Set(ctx, "lock", "c2", 0).Err()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "READONLY")
}

// The failover the lab stages: the primary takes a write its replicas never
// got (their replication links cut), dies, and a replica is promoted
// without the key — the lock it held is free on the new primary. The other
// replica follows the new primary once its link heals.
func TestAFailoverLosesWhatWasNotReplicated(t *testing.T) {
	needRedis(t)
	ctx := t.Context()
	s, err := redisd.StartReplicated(ctx, 2, redisd.Options{})
	require.NoError(t, err)
	defer s.Close()
	pl, err := s.PrimaryLink()
	require.NoError(t, err)
	c1 := client(t, pl.Addr())

	s.Replication(1).Cut()
	s.Replication(2).Cut()
	ok, err := c1.SetNX(ctx, "lock", "c1", 10*time.Second).Result()
	require.NoError(t, err)
	require.True(t, ok)
	s.Kill(0)
	assert.Nil(t, s.Admin(0))
	s.Replication(1).Heal()
	require.NoError(t, s.Promote(ctx, 1))
	assert.Equal(t, 1, s.Primary())

	_, err = s.Admin(1).Get(ctx, "lock").Result()
	assert.ErrorIs(t, err, redis.Nil, "the promoted replica never had the key")
	c2 := client(t, pl.Addr()) // a new connection reaches the new primary
	ok, err = c2.SetNX(ctx, "lock", "c2", 10*time.Second).Result()
	require.NoError(t, err)
	assert.True(t, ok, "a second client is granted the lock c1 still holds")

	s.Replication(2).Heal()
	require.Eventually(t, func() bool {
		v, err := s.Admin(2).Get(ctx, "lock").Result()
		return err == nil && v == "c2"
	}, 20*time.Second, 20*time.Millisecond, "r3 follows the new primary")
	role, _, err := s.Role(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, "master", role)
}

// Independent primaries share nothing: Redlock's five masters.
func TestIndependentPrimariesShareNothing(t *testing.T) {
	needRedis(t)
	ctx := t.Context()
	s, err := redisd.StartIndependent(ctx, 5, redisd.Options{})
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, -1, s.Primary())
	require.NoError(t, s.Admin(0).Set(ctx, "lock", "c1", 0).Err())
	for i := range 5 {
		role, _, err := s.Role(ctx, i)
		require.NoError(t, err)
		assert.Equal(t, "master", role)
		if i > 0 {
			assert.ErrorIs(t, s.Admin(i).Get(ctx, "lock").Err(), redis.Nil)
		}
	}
	assert.Nil(t, s.Replication(1))
	assert.Error(t, s.Promote(context.Background(), 4), "nothing to promote among independent primaries")
}

// A server's wall clock moved forward past a key's expiry expires it at
// once; moved back, a key lives longer; the other server's clock stays.
func TestAServersClockJumps(t *testing.T) {
	needRedis(t)
	if _, err := clockshim.Build(t.Context()); err != nil {
		t.Skipf("%v", err)
	}
	ctx := t.Context()
	s, err := redisd.StartIndependent(ctx, 2, redisd.Options{Clocks: true})
	require.NoError(t, err)
	defer s.Close()
	for i := range 2 {
		require.NoError(t, s.Admin(i).Set(ctx, "lock", "c1", 10*time.Second).Err())
	}
	require.NoError(t, s.JumpClock(0, 20*time.Second))
	assert.Equal(t, 20*time.Second, s.ClockOffset(0))
	assert.ErrorIs(t, s.Admin(0).Get(ctx, "lock").Err(), redis.Nil, "expired at once on r1")
	assert.NoError(t, s.Admin(1).Get(ctx, "lock").Err(), "r2's clock did not move")
	require.NoError(t, s.ResetClock(0))
	require.NoError(t, s.Admin(0).Set(ctx, "lock", "c2", 10*time.Second).Err())
	require.NoError(t, s.JumpClock(0, -time.Minute))
	ttl, err := s.Admin(0).PTTL(ctx, "lock").Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, time.Minute, "set back, the key lives a minute longer")
}

// Without redis-server on PATH, starting says so and how to install it.
func TestWithoutRedisStartingSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := redisd.StartReplicated(t.Context(), 2, redisd.Options{})
	require.ErrorIs(t, err, redisd.ErrNotInstalled)
	assert.Contains(t, err.Error(), "apt-get install redis-server")
}

// A Redis of the user's own is reached through the lab's links like one
// the lab started, its password kept; the lab neither kills nor promotes
// it, and closing the Set leaves it running.
func TestConnectUsesARedisOfYourOwn(t *testing.T) {
	needRedis(t)
	ctx := t.Context()
	own, err := redisd.StartIndependent(ctx, 1, redisd.Options{})
	require.NoError(t, err)
	defer own.Close()
	require.NoError(t, own.Admin(0).ConfigSet(ctx, "requirepass", "s3cret").Err())
	addr := own.Admin(0).Options().Addr

	_, err = redisd.Connect(ctx, []string{addr})
	require.Error(t, err, "no password: refused")
	_, err = redisd.Connect(ctx, []string{"127.0.0.1"})
	require.ErrorContains(t, err, "want host:port or a redis:// URL")

	s, err := redisd.Connect(ctx, []string{"redis://:s3cret@" + addr})
	require.NoError(t, err)
	assert.True(t, s.External())
	assert.Equal(t, 0, s.Primary())
	p, err := s.PrimaryLink()
	require.NoError(t, err)
	c := redis.NewClient(s.ClientOptions(0, p.Addr()))
	defer c.Close()
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	assert.Equal(t, "v", s.Admin(0).Get(ctx, "k").Val())
	s.Kill(0)
	require.Error(t, s.Promote(ctx, 0))
	require.NoError(t, s.Close())
	own.Admin(0).Do(ctx, "AUTH", "s3cret")
	assert.Equal(t, "v", own.Admin(0).Get(ctx, "k").Val(), "the user's Redis still runs, its data kept")
}
