package etcdlock

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/lock"
)

// renewGivesUp is a single-key lock that keeps its lease alive itself, as
// lock libraries over stores without sessions do: the key is put if absent
// on a lease of its own (polled, like ttl-poll), and while it holds, a
// renewer sends a keep-alive every TTL/3, giving each TTL/4 to be answered.
// The first keep-alive that fails ends the renewing for good — a transient
// error is taken for a lost lock, and nobody is told (cozy-stack's lock
// renewer after pull request 4911 stops on any error, transient too). A link
// that fails for a few hundred milliseconds while it holds lets its lease
// lapse a TTL later, and the next client is granted while it still works.
// Otherwise correct. Known bad: link-blip catches it.
type renewGivesUp struct {
	cli *clientv3.Client
	ttl time.Duration
	key string
	// loop renews the held grant's lease until stop closes: giveUp, or
	// late (renew-late's).
	loop func(l *renewGivesUp, lease clientv3.LeaseID, stop <-chan struct{})

	mu    sync.Mutex
	lease clientv3.LeaseID // the lease of the latest acquire
	stop  chan struct{}    // closes the renewer of the held grant
	done  chan struct{}    // closed when that renewer has returned
}

// NewRenewGivesUp returns the renew-gives-up known-bad lock.
func NewRenewGivesUp(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	opts, err := withDefaults(opts)
	if err != nil {
		return nil, err
	}
	return &renewGivesUp{cli: client, ttl: time.Duration(opts.TTL) * time.Second, key: opts.Prefix + name,
		loop: giveUp}, nil
}

// NewRenewLate returns the renew-late known-bad lock: renew-gives-up's
// lock with another renewer (see late).
func NewRenewLate(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	l, err := NewRenewGivesUp(client, name, opts)
	if err != nil {
		return nil, err
	}
	l.(*renewGivesUp).loop = late
	return l, nil
}

func (l *renewGivesUp) Acquire(ctx context.Context) (lock.Grant, error) {
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	lease := l.Lease()
	for {
		if lease == 0 {
			resp, err := l.cli.Grant(ctx, int64(l.ttl/time.Second))
			if err != nil {
				return lock.Grant{}, err
			}
			lease = resp.ID
			l.mu.Lock()
			l.lease = lease
			l.mu.Unlock()
		}
		resp, err := putOnLease(ctx, l.cli, l.key, lease)
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			lease = 0 // it lapsed while we polled
			continue
		case err != nil:
			// The put may have committed with its answer lost: the key
			// goes with the lease, which nobody renews.
			l.forget(lease)
			return lock.Grant{}, err
		case resp.Succeeded:
			l.renew(lease)
			return lock.Grant{Token: resp.Header.Revision, Key: l.key, Lease: int64(lease)}, nil
		}
		// While it waits, it keeps its lease alive by asking again.
		if _, err := l.cli.KeepAliveOnce(ctx, lease); errors.Is(err, rpctypes.ErrLeaseNotFound) {
			lease = 0
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return lock.Grant{}, ctx.Err()
		}
	}
}

// forget drops lease as the one to use next.
func (l *renewGivesUp) forget(lease clientv3.LeaseID) {
	l.mu.Lock()
	if l.lease == lease {
		l.lease = 0
	}
	l.mu.Unlock()
}

// renew starts the renewer of lease.
func (l *renewGivesUp) renew(lease clientv3.LeaseID) {
	stop, done := make(chan struct{}), make(chan struct{})
	l.mu.Lock()
	l.stop, l.done = stop, done
	l.mu.Unlock()
	go func() {
		defer close(done)
		l.loop(l, lease, stop)
	}()
}

// giveUp sends a keep-alive every TTL/3 (the rhythm of etcd's own client,
// and of many a hand-written renewer), giving each TTL/4 to be answered,
// and gives up at the first that fails. The answer's time is well inside
// link-blip's hold (0.4 TTL), so that a renewer whose own timer a busy
// machine delays still finds no answer when it looks (with TTL/3, a fifteenth
// of a TTL inside the hold, a loaded run of go test let it pass once).
func giveUp(l *renewGivesUp, lease clientv3.LeaseID, stop <-chan struct{}) {
	t := time.NewTicker(l.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.ttl/4)
		_, err := l.cli.KeepAliveOnce(ctx, lease)
		cancel()
		if err != nil {
			return // the bug: one failure, and the lease is left to lapse
		}
	}
}

// late renews the lease just before it would end by its own reckoning: a
// TTL less a fiftieth after the last answer (after the grant, at first),
// and again at once after an answer that did not come. It never gives up.
// The bug: the server renewed the lease when the keep-alive arrived, before
// the answer came back, and the next keep-alive arrives a trip later
// still — on a link that delays each message by more than a fiftieth of
// the TTL, a renewal comes after the lease has ended.
func late(l *renewGivesUp, lease clientv3.LeaseID, stop <-chan struct{}) {
	wait := l.ttl - l.ttl/50
	for {
		t := time.NewTimer(wait)
		select {
		case <-stop:
			t.Stop()
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.ttl)
		_, err := l.cli.KeepAliveOnce(ctx, lease)
		cancel()
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			return // ended: nothing left to renew
		case err != nil:
			wait = PollInterval
		default:
			wait = l.ttl - l.ttl/50 // from the answer, not from when it was sent
		}
	}
}

// stopRenewing stops the held grant's renewer, if any, and waits for it.
func (l *renewGivesUp) stopRenewing() {
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.stop, l.done = nil, nil
	l.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (l *renewGivesUp) Release(ctx context.Context, g lock.Grant) error {
	l.stopRenewing()
	return releaseIfOwner(ctx, l.cli, g)
}

func (l *renewGivesUp) Lease() clientv3.LeaseID {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lease
}

// Close stops renewing and revokes the latest lease, if it still lives.
func (l *renewGivesUp) Close() error {
	l.stopRenewing()
	lease := l.Lease()
	if lease == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := l.cli.Revoke(ctx, lease); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return err
	}
	return nil
}
