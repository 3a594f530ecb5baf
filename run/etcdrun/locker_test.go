package etcdrun

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/run"
)

// A lock whose factory blocks — as a session's lease grant does on a member
// cut off from the quorum — holds a step up for an operation's timeout, not
// for as long as the factory takes: the step fails as timed out, the next
// one waits for the same call rather than start another, and the run's end
// closes the client, which ends the call, and leaves nothing behind
// (goleak, in TestMain).
func TestRenewGivesUpOnAFactoryThatBlocks(t *testing.T) {
	c, err := cluster.Start(t.Context(), cluster.Config{Members: 1})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	var calls atomic.Int32
	blocking := func(cli *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
		if calls.Add(1) == 1 {
			return etcdlock.NewQueue(cli, name, opts)
		}
		<-cli.Ctx().Done()
		return nil, cli.Ctx().Err()
	}
	const opTimeout = 300 * time.Millisecond
	e, err := New(Config{Cluster: c, Factory: blocking, TTL: 1, RunID: "blocking", Resource: []string{"unfenced"},
		OpTimeout: opTimeout})
	require.NoError(t, err)
	require.NoError(t, e.AddClient(t.Context(), "c1", "m1"))
	_, err = e.Fault(t.Context(), faults.Fault{Kind: faults.CutClient, Client: "c1"}) // what keeps a grant waiting
	require.NoError(t, err)
	start := time.Now()
	err = e.Renew("c1")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "making the lock for c1: its factory had not returned within 300ms")
	assert.Less(t, time.Since(start), 10*opTimeout, "renew waited for the factory")
	require.ErrorIs(t, e.Renew("c1"), context.DeadlineExceeded)
	assert.Equal(t, int32(2), calls.Load(), "the second renew waited for the call the first gave up on")
	assert.Equal(t, run.FailTimedOut, run.FailedOutcome(run.Failed, "c1", err).Failure)
	require.NoError(t, e.Close())
}

// With no fault open, a factory slower than an operation's timeout — a
// lease grant on a machine too busy to commit it in time — is waited for:
// the client is made, and the step goes on.
func TestRenewWaitsForASlowFactoryWhenNoFaultIsOpen(t *testing.T) {
	c, err := cluster.Start(t.Context(), cluster.Config{Members: 1})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	const opTimeout = 100 * time.Millisecond
	slow := func(cli *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
		select {
		case <-time.After(3 * opTimeout): // not a guess at a condition: the slowness under test
		case <-cli.Ctx().Done():
			return nil, cli.Ctx().Err()
		}
		return etcdlock.NewQueue(cli, name, opts)
	}
	e, err := New(Config{Cluster: c, Factory: slow, TTL: 1, RunID: "slow", Resource: []string{"unfenced"},
		OpTimeout: opTimeout})
	require.NoError(t, err)
	require.NoError(t, e.AddClient(t.Context(), "c1", "m1"))
	require.NoError(t, e.Close())
}
