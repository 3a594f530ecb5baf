package redislock

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lock"
)

// A renewer keeps a held grant's key alive in the watchdog's place until
// ctx ends or lost closes; tell closes lost. The known-bad Redis locks
// that renew wrongly are redis-setnx with one of these.
type renewer func(ctx context.Context, l *single, g lock.Grant, lost <-chan struct{}, tell func())

// renewOnce sends one renewal of g's key, giving it within to be answered:
// the number of keys it renewed (0: the key is gone or another's).
func (l *single) renewOnce(ctx context.Context, g lock.Grant, within time.Duration) (int64, error) {
	rctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	return renewScript.Run(rctx, l.c, []string{g.Key}, g.Value, l.set.ttl.Milliseconds()).Int64()
}

// givesUp renews every TTL/3, giving each renewal TTL/4 to be answered,
// and stops renewing for good at the first that fails — a transient error
// taken for a lost lock — telling nobody. A link that fails one way for a
// few hundred milliseconds as it renews lets the key expire a TTL later,
// and the next client is granted while the holder still works.
func givesUp(ctx context.Context, l *single, g lock.Grant, lost <-chan struct{}, tell func()) {
	t := time.NewTicker(l.set.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-lost:
			return
		case <-t.C:
		}
		n, err := l.renewOnce(ctx, g, l.set.ttl/4)
		switch {
		case err != nil:
			return // gives up, and says nothing
		case n == 0:
			tell()
			return
		}
	}
}

// late renews a TTL less a fiftieth after the last renewal's answer (the
// grant's, first), not after it was sent: each renewal comes a round trip
// later than the one before could keep the key, and on a link slow by more
// than a fiftieth of the TTL each way it reaches Redis after the key has
// expired — the next client may be granted by then. A renewal that finds
// the key gone tells the holder.
func late(ctx context.Context, l *single, g lock.Grant, lost <-chan struct{}, tell func()) {
	for {
		t := time.NewTimer(l.set.ttl - l.set.ttl/50)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-lost:
			t.Stop()
			return
		case <-t.C:
		}
		n, err := l.renewOnce(ctx, g, l.set.ttl)
		if err == nil && n == 0 {
			tell()
			return
		}
	}
}

// NewRenewGivesUp returns the known-bad redis-renew-gives-up:
// redis-setnx whose watchdog stops renewing for good at the first
// renewal that fails, telling nobody (givesUp).
func NewRenewGivesUp(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	return withRenewer(servers, name, opts, givesUp)
}

// NewRenewLate returns the known-bad redis-renew-late: redis-setnx
// renewed a TTL less a fiftieth after each renewal's answer (late).
func NewRenewLate(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	return withRenewer(servers, name, opts, late)
}

func withRenewer(servers []*redis.Client, name string, opts lock.Options, r renewer) (lock.Locker, error) {
	l, err := newSingle(servers, name, opts, true, releaseChecked)
	if err == nil {
		l.(*single).renewer = r
	}
	return l, err
}
