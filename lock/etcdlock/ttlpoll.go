package etcdlock

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/lock"
)

// PollInterval is how often ttl-poll retries a held lock.
const PollInterval = 50 * time.Millisecond

// ttlPoll is Redis' `SET key token NX PX ttl` pattern on etcd, as Martin
// Kleppmann's "How to do distributed locking" and the Redis docs describe it:
// one key, put only if absent and bound to a lease; a client that finds it
// taken tries again every 50 ms. Release deletes the key only if its value is
// still the client's own random value (one Txn: the Lua-script equivalent).
//
// Token: the key's create revision (Redis has none; etcd gives one for free).
// Requests per uncontended acquire+release: 2 (Txn, Txn).
//
// Weaknesses: active polling (load grows with waiters, a hand-off waits up
// to 50 ms), no queue, no fairness: a newcomer can overtake a client that has
// waited long.
type ttlPoll struct {
	leased
	key   string
	count atomic.Int64
	polls atomic.Int64
}

// NewTTLPoll returns the ttl-poll lock.
func NewTTLPoll(client *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
	s, opts, err := session(client, opts)
	if err != nil {
		return nil, err
	}
	return &ttlPoll{leased: leased{s: s}, key: opts.Prefix + name}, nil
}

func (l *ttlPoll) Acquire(ctx context.Context) (lock.Grant, error) {
	value := fmt.Sprintf("%x-%d", l.s.Lease(), l.count.Add(1))
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	for {
		if isExpired(l.s) {
			return lock.Grant{}, lock.ErrSessionExpired
		}
		rev, _, err := l.putIfAbsent(ctx, l.key, value)
		if err != nil {
			// The put may have committed with its answer lost.
			return lock.Grant{}, failed(ctx, err, l.s, l.key, l.granted)
		}
		if rev != 0 {
			return l.grant(l.key, rev), nil
		}
		select {
		case <-tick.C: // the algorithm's own polling interval
			l.polls.Add(1)
		case <-ctx.Done():
			return lock.Grant{}, ctx.Err()
		}
	}
}

// Polls is how many times Acquire has tried again after finding the lock
// taken.
func (l *ttlPoll) Polls() int64 { return l.polls.Load() }

var _ lock.Poller = (*ttlPoll)(nil)
