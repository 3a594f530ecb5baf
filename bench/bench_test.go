package bench_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/lock/etcdctl"
	"github.com/locklab/locklab/lock/etcdlock"

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock"
)

func TestMain(m *testing.M) {
	etcdctl.Serve() // the etcdctl lock's etcdctl is this binary
	goleak.VerifyTestMain(m)
}

func start(t *testing.T) *cluster.Cluster {
	t.Helper()
	// Five times the lab's election timeout: nothing here changes a
	// leader, and a starved machine must not elect one mid-count.
	c, err := cluster.Start(t.Context(), cluster.Config{TickMs: 50, ElectionMs: 500})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRunCountsGrantsAndRequests(t *testing.T) {
	c := start(t)
	for _, name := range []string{"etcd-mutex", "queue"} {
		f, err := etcdlock.Lookup(name)
		require.NoError(t, err)
		res, err := bench.Run(t.Context(), c, bench.Config{Lock: name, Factory: f, Clients: 1, Acquires: 20})
		require.NoError(t, err)
		assert.Equal(t, 20, res.Acquires)
		assert.Equal(t, 2.0, res.Requests, "%s: one request to acquire, one to release", name)
		assert.Equal(t, 1.0, res.SameClient)
		assert.Len(t, res.Handoff.Samples, 19)
		assert.Positive(t, res.LocksPerSec)
		assert.LessOrEqual(t, res.Acquire.P50, res.Acquire.P99)
		assert.LessOrEqual(t, res.Acquire.P99, res.Acquire.Max)
	}
	resp, err := c.Admin().Get(t.Context(), "locklab/bench/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	assert.Zero(t, resp.Count, "a measurement leaves no key behind")
}

// A lock run as a process is counted off its client's link: etcdctl takes
// a session per grant, so each acquire and release costs five requests —
// a lease, the queueing Txn, the lab's read of the key it prints (for the
// token), the unlock and the revoke — and a waiter is woken by a watch
// event of its own, which the lab sees on the wire.
func TestRunCountsAProcessLocksRequests(t *testing.T) {
	c := start(t)
	f, err := etcdlock.Lookup("etcdctl")
	require.NoError(t, err)
	res, err := bench.Run(t.Context(), c, bench.Config{Lock: "etcdctl", Factory: f, Clients: 1, Acquires: 10})
	require.NoError(t, err)
	assert.Equal(t, 5.0, res.Requests)
	// Each holder works long enough that the others' processes, however
	// slowly they start (a race-built etcdctl takes hundreds of ms), are
	// queued behind it: a release then has a waiter to wake.
	res, err = bench.Run(t.Context(), c, bench.Config{Lock: "etcdctl", Factory: f, Clients: 3, Acquires: 6,
		Section: func() { time.Sleep(time.Second) }})
	require.NoError(t, err)
	assert.Positive(t, res.Wakeups, "waiters are woken by watch events read off the link")
}

func TestRunContendedQueueIsFair(t *testing.T) {
	c := start(t)
	res, err := bench.Run(t.Context(), c, bench.Config{Lock: "queue", Factory: etcdlock.NewQueue, Clients: 4, Acquires: 80})
	require.NoError(t, err)
	assert.Equal(t, 80, res.Acquires)
	// A FIFO queue with four clients always looping never hands the lock
	// straight back, except when a releasing client re-enqueues before
	// anyone else is queued.
	assert.Less(t, res.SameClient, 0.5)
}

func TestRunStopsAfterDuration(t *testing.T) {
	c := start(t)
	res, err := bench.Run(t.Context(), c, bench.Config{Lock: "queue", Factory: etcdlock.NewQueue, Clients: 3, Duration: 300 * time.Millisecond})
	require.NoError(t, err)
	assert.Positive(t, res.Acquires)
	assert.GreaterOrEqual(t, res.Elapsed, 300*time.Millisecond)
}

// noLock grants every Acquire at once: the broken lock the mutual exclusion
// check must catch.
type noLock struct{}

func (noLock) Acquire(context.Context) (lock.Grant, error)                  { return lock.Grant{}, nil }
func (noLock) Release(context.Context, lock.Grant) error                    { return nil }
func (noLock) Lease() clientv3.LeaseID                                      { return 0 }
func (noLock) Close() error                                                 { return nil }
func newNoLock(*clientv3.Client, string, lock.Options) (lock.Locker, error) { return noLock{}, nil }

func TestRunCatchesTwoHolders(t *testing.T) {
	c := start(t)
	// The section waits (bounded) until a second client is inside too,
	// which only a broken lock allows.
	var mu sync.Mutex
	inside := 0
	both := make(chan struct{})
	section := func() {
		mu.Lock()
		inside++
		if inside == 2 {
			close(both)
		}
		mu.Unlock()
		select {
		case <-both:
		case <-time.After(10 * time.Second):
		}
	}
	_, err := bench.Run(t.Context(), c, bench.Config{Lock: "none", Factory: newNoLock, Clients: 2, Acquires: 2, Section: section})
	require.ErrorIs(t, err, bench.ErrMutualExclusion)
}

// neverLock is a lock whose Acquire waits until it is given up.
type neverLock struct{ noLock }

func (neverLock) Acquire(ctx context.Context) (lock.Grant, error) {
	<-ctx.Done()
	return lock.Grant{}, ctx.Err()
}

// A measurement in which no lock was granted is an error, not a row of
// zeros.
func TestRunWithNoGrantFails(t *testing.T) {
	c := start(t)
	never := func(*clientv3.Client, string, lock.Options) (lock.Locker, error) { return neverLock{}, nil }
	_, err := bench.Run(t.Context(), c, bench.Config{Lock: "never", Factory: never, Clients: 2, Duration: 200 * time.Millisecond})
	require.ErrorIs(t, err, bench.ErrNoGrant)
	assert.Contains(t, err.Error(), "with 2 client(s)")
}

func TestRunRejectsBadConfig(t *testing.T) {
	c := start(t)
	for _, cfg := range []bench.Config{
		{Factory: etcdlock.NewQueue, Clients: 0, Acquires: 1},
		{Factory: etcdlock.NewQueue, Clients: 1},
		{Clients: 1, Acquires: 1},
	} {
		_, err := bench.Run(t.Context(), c, cfg)
		assert.Error(t, err)
	}
}

func TestRunInterrupted(t *testing.T) {
	c := start(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := bench.Run(ctx, c, bench.Config{Lock: "queue", Factory: etcdlock.NewQueue, Clients: 2, Duration: time.Minute})
	require.ErrorIs(t, err, context.Canceled)
}

func TestWakeupsShowTheHerd(t *testing.T) {
	c := start(t)
	const clients = 6
	measure := func(name string) bench.Result {
		f, err := etcdlock.Lookup(name)
		require.NoError(t, err)
		// Each holder stays long enough that every other client is waiting
		// when it releases.
		res, err := bench.Run(t.Context(), c, bench.Config{Lock: name, Factory: f, Clients: clients, Acquires: 60,
			Section: func() { time.Sleep(5 * time.Millisecond) }})
		require.NoError(t, err)
		return res
	}
	herd := measure("single-key-watch")
	assert.Greater(t, herd.FutileWakeups, 2.0, "a release wakes every waiter, and all but one go back to sleep")
	queue := measure("queue")
	assert.Less(t, queue.FutileWakeups, 0.5, "a release wakes only the next in line")
	assert.InDelta(t, 1.0, queue.Wakeups, 0.3)
	// Waiters poll every 50 ms and mostly find the lock taken (the
	// releasing client usually takes it straight back).
	poll := measure("ttl-poll")
	assert.Greater(t, poll.FutileWakeups, 0.3, "polls are wake-ups too")
}

func TestCPUIsMeasured(t *testing.T) {
	c := start(t)
	res, err := bench.Run(t.Context(), c, bench.Config{Lock: "queue", Factory: etcdlock.NewQueue, Clients: 2, Acquires: 40})
	require.NoError(t, err)
	assert.True(t, res.CPU.Shared, "an embedded cluster shares the process")
	assert.Positive(t, res.CPU.Clients)

	var cluster time.Duration
	res, err = bench.Run(t.Context(), c, bench.Config{Lock: "queue", Factory: etcdlock.NewQueue, Clients: 2, Acquires: 40,
		ClusterCPU: func() (time.Duration, error) { cluster += time.Second; return cluster, nil }})
	require.NoError(t, err)
	assert.False(t, res.CPU.Shared)
	assert.Equal(t, time.Second*1000/40, res.CPU.Cluster, "the cluster's CPU, per 1000 locks")
}

func TestFloor(t *testing.T) {
	c := start(t)
	d, err := bench.Floor(t.Context(), c, 50)
	require.NoError(t, err)
	assert.Len(t, d.Samples, 50)
	assert.Positive(t, d.P50)
	assert.LessOrEqual(t, d.P50, d.P70)
	assert.LessOrEqual(t, d.P70, d.P90)
	_, err = bench.Floor(t.Context(), c, 0)
	assert.Error(t, err)
	resp, err := c.Admin().Get(t.Context(), "locklab/bench/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	assert.Zero(t, resp.Count, "the floor leaves no key behind")
}
