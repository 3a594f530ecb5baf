package redisrun_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/redislock"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/run/redisrun"
	"github.com/locklab/locklab/script"
)

// newEnv starts Redis for lock name (five masters for Redlock, a primary
// and two replicas otherwise) and a run of it, or skips the test where
// redis-server is missing.
func newEnv(t *testing.T, name string) *redisrun.Env {
	t.Helper()
	if _, err := redisd.Find(); err != nil {
		t.Skipf("%v: the Redis engine was not tried (.ci/run installs it)", err)
	}
	f, err := redislock.Lookup(name)
	require.NoError(t, err)
	masters := name == "redlock"
	var s *redisd.Set
	if masters {
		s, err = redisd.StartIndependent(t.Context(), 5, redisd.Options{})
	} else {
		s, err = redisd.StartReplicated(t.Context(), 2, redisd.Options{})
	}
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	e, err := redisrun.New(redisrun.Config{Set: s, Masters: masters, Factory: f, TTL: 1, RunID: t.Name()})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.Close()) })
	return e
}

// do runs each line on e and returns the outputs, one per line.
func do(t *testing.T, e script.Target, lines ...string) []string {
	t.Helper()
	var outs []string
	for _, line := range lines {
		out, err := script.DoLine(t.Context(), e, line)
		require.NoError(t, err)
		outs = append(outs, out.String())
	}
	return outs
}

// verdicts are each resource's verdict, as "unfenced FAIL".
func verdicts(t *testing.T, e *redisrun.Env) []string {
	t.Helper()
	reps, err := e.Reports()
	require.NoError(t, err)
	var out []string
	for i, r := range reps {
		out = append(out, fmt.Sprintf("%s %s", e.Resources()[i], r.Result()))
	}
	return out
}

func TestAPausedRedisHolderWritesAfterTheNext(t *testing.T) {
	e := newEnv(t, "redis-setnx")
	e.Bind(context.WithoutCancel(t.Context()))
	outs := do(t, e, "client c1 member=m1", "client c2 member=m2", "acquire c1", "pause c1 at=before-write",
		"cs c1 async", "wait-paused c1", "wait-lease-gone c1", "acquire c2", "cs c2", "release c2", "resume c1", "await c1")
	assert.Equal(t, []string{"c1: connected to m1", "c2: connected to m2", "c1: granted token=t1",
		"c1: will pause at before-write", "c1: in critical section", "c1: paused at before-write, link cut",
		"server: c1's lease is gone", "c2: granted token=t2", "c2: unfenced read 0 wrote 1; fenced read 0 wrote 1; redis-guarded read 0 wrote 1",
		"c2: released", "c1: resumed",
		"c1: unfenced read 0 wrote 1; fenced read 0 rejected: stale token; redis-guarded read 0 rejected: lock lost"}, outs)
	assert.Equal(t, []string{"unfenced FAIL", "fenced PASS", "redis-guarded PASS"}, verdicts(t, e))
}

func TestAFailoverHandsTheLockToASecondClientWithTheSameToken(t *testing.T) {
	e := newEnv(t, "redis-setnx")
	e.Bind(context.WithoutCancel(t.Context()))
	outs := do(t, e, "client c1 member=m1", "client c2 member=m2", "isolate member=m1", "acquire c1",
		"pause c1 at=before-write", "cs c1 async", "wait-paused c1", "failover", "acquire c2", "cs c2",
		"resume c1", "await c1", "heal")
	assert.Equal(t, "server: m1 killed, m2 promoted without the lock keys of c1", outs[7])
	assert.Equal(t, "c2: granted token=t1", outs[8], "the token counter went back with the failover")
	assert.Equal(t, "c1: unfenced read 0 wrote 1; fenced read 0 wrote 1; redis-guarded read 0 rejected: lock lost", outs[11],
		"a write guarded in Redis finds the key c2's on the new primary")
	for _, v := range verdicts(t, e) {
		assert.True(t, strings.HasSuffix(v, string(models.Fail)), v)
	}
}

// A redis-server that died during a run, not by a fault of the lab's, is
// said to have died, with its last output — not read as keys the run
// could not remove ("connection refused").
func TestARedisServerThatDiedSaysSo(t *testing.T) {
	if _, err := redisd.Find(); err != nil {
		t.Skipf("%v: the Redis engine was not tried (.ci/run installs it)", err)
	}
	before := goleak.IgnoreCurrent()
	s, err := redisd.StartReplicated(t.Context(), 0, redisd.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		s.Close()
		// go-redis dials a dead server again a second after each try until
		// its pool is closed: its goroutine ends a second after the close.
		assert.Eventually(t, func() bool { return goleak.Find(before) == nil }, 10*time.Second, 100*time.Millisecond,
			"the clients of the dead server are gone")
	})
	f, err := redislock.Lookup("redis-setnx")
	require.NoError(t, err)
	e, err := redisrun.New(redisrun.Config{Set: s, Factory: f, TTL: 1, RunID: t.Name()})
	require.NoError(t, err)
	do(t, e, "client c1 member=m1", "acquire c1")
	s.Admin(0).Do(t.Context(), "SHUTDOWN", "NOSAVE") // its own doing, as a crash would be
	require.Eventually(t, func() bool { dead, _ := s.Died(0); return dead }, 10*time.Second, 10*time.Millisecond)
	_, last := s.Died(0)
	assert.NotEmpty(t, last, "what it printed last")
	err = e.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "redis-server "+s.Names()[0]+" died during the run, not by a fault of the lab's")
	assert.NotContains(t, err.Error(), "removing the run's keys")
}

// A lock that writes a key of its own making from the name it is given (a
// library's "mutex:NAME") is followed at the key its grant names, and the
// run leaves that key behind no more than the ones under its prefix.
func TestAKeyOutsideTheRunsPrefixIsFollowedAndRemoved(t *testing.T) {
	if _, err := redisd.Find(); err != nil {
		t.Skipf("%v: the Redis engine was not tried (.ci/run installs it)", err)
	}
	s, err := redisd.StartReplicated(t.Context(), 0, redisd.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	mutex := func(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
		opts.Prefix = "mutex:" + opts.Prefix
		return redislock.NewSetNX(servers, name, opts)
	}
	e, err := redisrun.New(redisrun.Config{Set: s, Factory: mutex, TTL: 3, RunID: t.Name()})
	require.NoError(t, err)
	outs := do(t, e, "client c1 member=m1", "client c2 member=m2", "acquire c1", "wait-lease-gone c1", "acquire c2")
	assert.Equal(t, []string{"c1: connected to m1", "c2: connected to m2", "c1: granted token=t1",
		"server: c1's lease is gone", "c2: granted token=t2"}, outs, "the lab saw c1's grant end at its own key")
	key := "mutex:locklab/runs/" + t.Name() + "/lock"
	n, err := s.Admin(s.Primary()).Exists(t.Context(), key).Result()
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "c2's key")
	require.NoError(t, e.Close())
	n, err = s.Admin(s.Primary()).Exists(t.Context(), key).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the run removed %s", key)
}

// forever is a user's lock that sets its key with no expiry: it rests on
// no lease, and a holder that dies keeps it for ever.
type forever struct{ c *redis.Client }

func (f forever) Acquire(ctx context.Context) (lock.Grant, error) {
	if err := f.c.SetNX(ctx, "locklab/forever", "v", 0).Err(); err != nil {
		return lock.Grant{}, err
	}
	return lock.Grant{Key: "locklab/forever", Value: "v", Token: 1}, nil
}

func (f forever) Release(ctx context.Context, _ lock.Grant) error {
	return f.c.Del(ctx, "locklab/forever").Err()
}

func (forever) Close() error { return nil }

// A grant whose key has no expiry is seen so as soon as it is granted, and
// lease-kept FAILs the run, whatever else happens.
func TestAKeyWithNoExpiryRestsOnNoLease(t *testing.T) {
	if _, err := redisd.Find(); err != nil {
		t.Skipf("%v: the Redis engine was not tried (.ci/run installs it)", err)
	}
	s, err := redisd.StartReplicated(t.Context(), 0, redisd.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	f := func(servers []*redis.Client, _ string, _ lock.Options) (lock.Locker, error) {
		return forever{servers[0]}, nil
	}
	e, err := redisrun.New(redisrun.Config{Set: s, Factory: f, TTL: 1, RunID: t.Name(), Resource: []string{"fenced"}})
	require.NoError(t, err)
	do(t, e, "client c1 member=m1", "acquire c1", "cs c1", "release c1")
	require.NoError(t, e.Close())
	reps, err := e.Reports()
	require.NoError(t, err)
	i := slices.IndexFunc(reps[0].Safety, func(v models.Verdict) bool { return v.Check == "lease-kept" })
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, models.Fail, reps[0].Safety[i].Result)
	assert.Contains(t, reps[0].Safety[i].Explanation, "rests on no lease")
}
