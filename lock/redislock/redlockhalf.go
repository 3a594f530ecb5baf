package redislock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lock"
)

// halfQuorum is Redlock written by hand with the majority miscounted:
// half its masters, rounded down — two of five — grant the lock. Two
// clients can then each hold keys on "enough" masters at once.
type halfQuorum struct {
	masters []*redis.Client
	key     string
	set     settings
}

// NewRedlockHalf returns the known-bad redlock-half: Redlock over
// independent masters that grants the lock on half of them, rounded down
// (len/2), not on a majority (len/2+1). Otherwise it is Redlock: SET NX PX
// with one random value on every master at once, each asked for at most a
// twentieth of the TTL; a grant only within the TTL less the time taken;
// keys given back on a failed try; release by compare-and-delete.
func NewRedlockHalf(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	set, err := settingsOf(opts)
	if err != nil {
		return nil, err
	}
	if len(servers) == 0 {
		return nil, fmt.Errorf("%w: Redlock needs its masters, got none", ErrBadOptions)
	}
	return &halfQuorum{masters: servers, key: set.prefix + name, set: set}, nil
}

func (l *halfQuorum) Acquire(ctx context.Context) (lock.Grant, error) {
	for {
		value, began := randomValue(), time.Now()
		took, _ := l.onEach(ctx, func(ctx context.Context, c *redis.Client) (bool, error) {
			return c.SetNX(ctx, l.key, value, l.set.ttl).Result()
		})
		if took >= len(l.masters)/2 && time.Since(began) < l.set.ttl { // the bug: len/2+1 is a majority
			return lock.Grant{Key: l.key, Value: value}, nil
		}
		l.giveBack(value)
		if err := wait(ctx, l.set.retry); err != nil {
			return lock.Grant{}, err
		}
	}
}

func (l *halfQuorum) Release(ctx context.Context, g lock.Grant) error {
	deleted, err := l.onEach(ctx, func(ctx context.Context, c *redis.Client) (bool, error) {
		n, err := releaseScript.Run(ctx, c, []string{g.Key}, g.Value).Int64()
		return n == 1, err
	})
	switch {
	case deleted >= len(l.masters)/2:
		return nil
	case err != nil: // a master that did not answer may have deleted its key
		return fmt.Errorf("redislock: releasing %s: %w", g.Key, err)
	}
	return lock.ErrNotHeld
}

func (l *halfQuorum) Close() error { return nil }

// giveBack deletes value's keys wherever they were set, on a context of
// its own: a try that failed leaves nothing behind (at worst the keys
// expire).
func (l *halfQuorum) giveBack(value string) {
	ctx, cancel := context.WithTimeout(context.Background(), l.set.ttl)
	defer cancel()
	l.onEach(ctx, func(ctx context.Context, c *redis.Client) (bool, error) {
		return true, releaseScript.Run(ctx, c, []string{l.key}, value).Err()
	})
}

// onEach runs do on every master at once, each within a twentieth of the
// TTL (as redsync bounds it: a master that does not answer costs the try
// little), counts the masters where it reported true, and joins the
// errors of those that failed.
func (l *halfQuorum) onEach(ctx context.Context, do func(context.Context, *redis.Client) (bool, error)) (int, error) {
	var (
		n    atomic.Int32
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, c := range l.masters {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, l.set.ttl/20)
			defer cancel()
			ok, err := do(ctx, c)
			switch {
			case err != nil:
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			case ok:
				n.Add(1)
			}
		})
	}
	wg.Wait()
	return int(n.Load()), errors.Join(errs...)
}
