package redislock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/redislock"
)

// start starts a primary with one replica, or five independent masters for
// Redlock, or skips the test where redis-server is missing.
func start(t *testing.T, name string) *redisd.Set {
	t.Helper()
	if _, err := redisd.Find(); err != nil {
		t.Skipf("%v: the Redis locks were not tried (.ci/run installs it)", err)
	}
	var (
		s   *redisd.Set
		err error
	)
	if name == "redlock" {
		s, err = redisd.StartIndependent(t.Context(), 5, redisd.Options{})
	} else {
		s, err = redisd.StartReplicated(t.Context(), 1, redisd.Options{})
	}
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// client is a lock's client through links of its own: the primary's, or
// each Redlock master's. The proxies let a test cut that client alone.
func client(t *testing.T, s *redisd.Set, name string) ([]*redis.Client, []*netproxy.Proxy) {
	t.Helper()
	var links []*netproxy.Proxy
	if name == "redlock" {
		for i := range s.Names() {
			p, err := s.Link(i)
			require.NoError(t, err)
			links = append(links, p)
		}
	} else {
		p, err := s.PrimaryLink()
		require.NoError(t, err)
		links = append(links, p)
	}
	var out []*redis.Client
	for _, p := range links {
		c := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1, DialTimeout: time.Second,
			ReadTimeout: time.Second, WriteTimeout: time.Second})
		t.Cleanup(func() { c.Close() })
		out = append(out, c)
	}
	return out, links
}

func locker(t *testing.T, s *redisd.Set, name string, opts lock.Options) (lock.Locker, []*netproxy.Proxy) {
	t.Helper()
	f, err := redislock.Lookup(name)
	require.NoError(t, err)
	servers, links := client(t, s, name)
	l, err := f(servers, "l", opts)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l, links
}

// Every Redis lock, known-bad included (but the one whose bug is its
// quorum), keeps three clients apart when nothing fails: no two inside at
// once over 30 grants; tokens grow.
func TestEveryRedisLockExcludes(t *testing.T) {
	for _, name := range append(redislock.Names(), redislock.KnownBad()...) {
		t.Run(name, func(t *testing.T) {
			if name == "redlock-half" {
				t.Skip("grants on two masters of five: two of three contenders can each take two, with no fault " +
					"at all (redlock-minority catches it on every seed)")
			}
			s := start(t, name)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			var (
				mu     sync.Mutex
				inside int
				worst  int
				tokens []int64
				wg     sync.WaitGroup
			)
			for c := range 3 {
				l, _ := locker(t, s, name, lock.Options{TTL: 5, Retry: 5 * time.Millisecond})
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 10 {
						g, err := l.Acquire(ctx)
						if !assert.NoError(t, err, "c%d", c) {
							return
						}
						mu.Lock()
						inside++
						worst = max(worst, inside)
						tokens = append(tokens, g.Token)
						mu.Unlock()
						time.Sleep(time.Millisecond)
						mu.Lock()
						inside--
						mu.Unlock()
						assert.NoError(t, l.Release(ctx, g))
					}
				}()
			}
			wg.Wait()
			assert.Equal(t, 1, worst, "never two inside at once")
			require.Len(t, tokens, 30)
			if name == "redlock" {
				assert.Equal(t, make([]int64, 30), tokens, "Redlock gives no fencing token")
				return
			}
			for i := 1; i < len(tokens); i++ {
				assert.Greater(t, tokens[i], tokens[i-1], "tokens grow with the grants")
			}
		})
	}
}

// waitGone waits until the lock key is gone from server i, as the lab
// reads it directly.
func waitGone(t *testing.T, s *redisd.Set, i int, key string) {
	t.Helper()
	require.Eventually(t, func() bool {
		return errors.Is(s.Admin(i).Get(t.Context(), key).Err(), redis.Nil)
	}, 10*time.Second, 5*time.Millisecond, "%s expires on %s", key, s.Names()[i])
}

// The oversell: c1 outlives its key while it works, c2 is granted, and c1's
// release deletes c2's key — a third client is granted beside c2. redis-del
// (a plain DEL) does that; redis-setnx's compare-and-delete refuses c1's
// release (ErrNotHeld) and c3 waits.
func TestAHolderOutlivingItsKeyReleasesTheNextOnesLockOnlyWithAPlainDEL(t *testing.T) {
	for _, tc := range []struct {
		name        string
		thirdInside bool
	}{{"redis-del", true}, {"redis-setnx", false}} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, tc.name)
			ctx := t.Context()
			opts := lock.Options{TTL: 1, Retry: 5 * time.Millisecond}
			c1, _ := locker(t, s, tc.name, opts)
			c2, _ := locker(t, s, tc.name, opts)
			c3, _ := locker(t, s, tc.name, opts)
			g1, err := c1.Acquire(ctx)
			require.NoError(t, err)
			waitGone(t, s, 0, g1.Key) // c1 works on past its key's expiry
			g2, err := c2.Acquire(ctx)
			require.NoError(t, err)
			err = c1.Release(ctx, g1)
			short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			_, err3 := c3.Acquire(short)
			if tc.thirdInside {
				assert.NoError(t, err, "the plain DEL deleted c2's key")
				assert.NoError(t, err3, "c3 is granted while c2 still holds the lock")
				return
			}
			assert.ErrorIs(t, err, lock.ErrNotHeld)
			assert.ErrorIs(t, err3, context.DeadlineExceeded, "c3 waits: c2 still holds the lock")
			v, err := s.Admin(0).Get(ctx, g2.Key).Result()
			require.NoError(t, err)
			assert.Equal(t, g2.Value, v, "c2's key is untouched")
		})
	}
}

// The watchdog keeps a holder's key for as long as it holds, several TTLs;
// cut off from the server past its TTL, the holder is told it lost the lock
// when its next renewal finds the key gone. redis-setnx, renewing nothing,
// loses its key after one TTL.
func TestTheWatchdogRenewsUntilItsLinkFails(t *testing.T) {
	s := start(t, "redis-watchdog")
	ctx := t.Context()
	opts := lock.Options{TTL: 1, Retry: 5 * time.Millisecond}
	w, links := locker(t, s, "redis-watchdog", opts)
	g, err := w.Acquire(ctx)
	require.NoError(t, err)
	require.NotNil(t, g.Lost)
	deadline := time.Now().Add(3 * time.Duration(opts.TTL) * time.Second)
	for time.Now().Before(deadline) {
		v, err := s.Admin(0).Get(ctx, g.Key).Result()
		require.NoError(t, err, "the key lives on under the watchdog")
		require.Equal(t, g.Value, v)
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case <-g.Lost:
		t.Fatal("Lost closed while the key lived")
	default:
	}
	links[0].Cut()
	waitGone(t, s, 0, g.Key)
	links[0].Sever()
	links[0].Heal()
	select {
	case <-g.Lost:
	case <-time.After(10 * time.Second):
		t.Fatal("the watchdog never told its holder the key was gone")
	}
	assert.ErrorIs(t, w.Release(ctx, g), lock.ErrNotHeld)

	n, _ := locker(t, s, "redis-setnx", opts)
	g, err = n.Acquire(ctx)
	require.NoError(t, err)
	assert.Nil(t, g.Lost, "redis-setnx cannot tell")
	waitGone(t, s, 0, g.Key)
}

// A failover hands the same lock to two clients: the primary granted c1,
// died before its replica had the key, and the promoted replica grants c2.
// The token counter went back with it: c2's token is c1's, not larger.
func TestAFailoverGrantsTheLockTwice(t *testing.T) {
	for _, name := range []string{"redis-setnx", "redis-watchdog"} {
		t.Run(name, func(t *testing.T) {
			s := start(t, name)
			ctx := t.Context()
			opts := lock.Options{TTL: 10, Retry: 5 * time.Millisecond}
			c1, _ := locker(t, s, name, opts)
			c2, _ := locker(t, s, name, opts)
			s.Replication(1).Cut()
			g1, err := c1.Acquire(ctx)
			require.NoError(t, err)
			s.Kill(0)
			// What the cut link held of the replication stream dies with
			// the primary: healed with it, the replica could still get c1's
			// writes.
			s.Replication(1).Sever()
			s.Replication(1).Heal()
			require.NoError(t, s.Promote(ctx, 1))
			g2, err := c2.Acquire(ctx)
			require.NoError(t, err, "c2 is granted the lock c1 holds")
			assert.NotEqual(t, g1.Value, g2.Value)
			assert.Equal(t, g1.Token, g2.Token, "the token went back with the failover")
		})
	}
}

// Redlock holds while a minority of its masters is down, and a second
// client is refused until the holder releases.
func TestRedlockHoldsThroughAMinorityOfMastersDown(t *testing.T) {
	s := start(t, "redlock")
	ctx := t.Context()
	opts := lock.Options{TTL: 10, Retry: 5 * time.Millisecond}
	c1, _ := locker(t, s, "redlock", opts)
	c2, _ := locker(t, s, "redlock", opts)
	g1, err := c1.Acquire(ctx)
	require.NoError(t, err)
	s.Kill(0)
	s.Kill(1)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = c2.Acquire(short)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "three of five masters still hold c1's key")
	require.NoError(t, c1.Release(ctx, g1))
	g2, err := c2.Acquire(ctx)
	require.NoError(t, err)
	require.NoError(t, c2.Release(ctx, g2))
	assert.ErrorIs(t, c2.Release(ctx, g2), lock.ErrNotHeld)
}

// Bad options and unknown names are refused.
func TestRedisLockOptionsAreChecked(t *testing.T) {
	_, err := redislock.Lookup("nope")
	assert.ErrorIs(t, err, redislock.ErrUnknownLock)
	f, err := redislock.Lookup("redis-setnx")
	require.NoError(t, err)
	_, err = f(nil, "l", lock.Options{})
	assert.ErrorIs(t, err, redislock.ErrBadOptions)
	_, err = f([]*redis.Client{nil}, "l", lock.Options{TTL: -1})
	assert.ErrorIs(t, err, lock.ErrBadTTL)
	_, err = redislock.NewRedlock(nil, "l", lock.Options{})
	assert.ErrorIs(t, err, redislock.ErrBadOptions)
	assert.Equal(t, fmt.Sprint([]string{"redis-setnx", "redis-watchdog", "redlock"}), fmt.Sprint(redislock.Names()))
}
