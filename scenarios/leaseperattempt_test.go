package scenarios_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/scenarios"
)

// leasePerAttempt is a user's lock that takes a lease of its own for each
// attempt, as lock libraries over stores without sessions do: one key, put
// if absent on that lease, polled; while it waits it keeps the lease alive
// by asking again, and once granted etcd's client renews it (KeepAlive,
// which rides out a slow answer or a blip). A lease that ended while it
// waited is replaced by a fresh one. Correct.
type leasePerAttempt struct {
	cli *clientv3.Client
	key string
	ttl int64

	mu    sync.Mutex
	lease clientv3.LeaseID   // the lease of the attempt under way or held
	stop  context.CancelFunc // ends the held grant's renewing
}

func newLeasePerAttempt(cli *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	return &leasePerAttempt{cli: cli, key: opts.Prefix + name, ttl: int64(max(opts.TTL, 1))}, nil
}

func (l *leasePerAttempt) Acquire(ctx context.Context) (lock.Grant, error) {
	for {
		lease := l.Lease()
		if lease == 0 {
			resp, err := l.cli.Grant(ctx, l.ttl)
			if err != nil {
				return lock.Grant{}, err
			}
			lease = resp.ID
			l.setLease(lease)
		}
		resp, err := l.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(l.key), "=", 0)).
			Then(clientv3.OpPut(l.key, "", clientv3.WithLease(lease))).Commit()
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			l.setLease(0) // it ended while we waited: a fresh one
			continue
		case err != nil:
			// The put may have taken with its answer lost: the key goes
			// with the lease, which nobody renews now.
			l.setLease(0)
			return lock.Grant{}, err
		case resp.Succeeded:
			kctx, stop := context.WithCancel(context.Background())
			answers, err := l.cli.KeepAlive(kctx, lease)
			if err != nil {
				stop()
				return lock.Grant{}, err
			}
			go func() {
				for range answers {
				}
			}()
			l.mu.Lock()
			l.stop = stop
			l.mu.Unlock()
			return lock.Grant{Token: resp.Header.Revision, Key: l.key, Lease: int64(lease)}, nil
		}
		if _, err := l.cli.KeepAliveOnce(ctx, lease); errors.Is(err, rpctypes.ErrLeaseNotFound) {
			l.setLease(0)
		}
		select {
		case <-time.After(etcdlock.PollInterval):
		case <-ctx.Done():
			return lock.Grant{}, ctx.Err()
		}
	}
}

// Release deletes the key if it is still g's, and lets g's lease go.
func (l *leasePerAttempt) Release(ctx context.Context, g lock.Grant) error {
	resp, err := l.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(g.Key), "=", g.Token)).
		Then(clientv3.OpDelete(g.Key)).Commit()
	if err != nil {
		return err
	}
	l.letGo(clientv3.LeaseID(g.Lease))
	if !resp.Succeeded {
		return lock.ErrNotHeld
	}
	return nil
}

// letGo stops renewing lease and revokes it, if it is the lock's.
func (l *leasePerAttempt) letGo(lease clientv3.LeaseID) {
	l.mu.Lock()
	stop := l.stop
	mine := lease != 0 && lease == l.lease
	if mine {
		l.lease, l.stop = 0, nil
	}
	l.mu.Unlock()
	if !mine {
		return
	}
	if stop != nil {
		stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.cli.Revoke(ctx, lease) //nolint:errcheck // it ends with its TTL anyway
}

func (l *leasePerAttempt) setLease(lease clientv3.LeaseID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lease = lease
}

func (l *leasePerAttempt) Lease() clientv3.LeaseID {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lease
}

func (l *leasePerAttempt) Close() error {
	l.letGo(l.Lease())
	return nil
}

// A lock that takes a lease for every attempt may lose the lease it waits
// on and go on waiting on a fresh one: expire revokes (or lets lapse) the
// lease the pending acquire uses, and a grant on the fresh one is a grant
// on a live lease, not the expired waiter's bug. Both expire lessons hold
// for it. (The lock renews its grant as etcd's client does: a lock that
// gave up at its first slow keep-alive — renew-gives-up — would lose its
// holder's lease on a busy machine, its own bug, not this lesson's.)
func TestExpireWhileWaitingForALeasePerAttemptLock(t *testing.T) {
	t.Parallel() // a few configurations, mostly waiting: side by side with the others
	sum, err := scenarios.Run(t.Context(), scenarios.Config{
		Scenarios: []string{"expire-while-waiting", "expire-while-waiting-lapse"}, Locks: []string{"lease-per-attempt"},
		Resources: resource.Names(), Seed: 1, Runs: 2, Factories: map[string]etcdlock.Factory{"lease-per-attempt": newLeasePerAttempt},
	})
	require.NoError(t, err)
	require.Len(t, sum.Results, 2*2*len(resourcesOn(scenarios.DefaultKind())))
	if allMatch(t, sum.Results) == 0 {
		assert.Equal(t, 0, sum.ExitCode())
	}
}
