package redislock

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lock"
)

// redlock is Redlock over independent masters, by go-redsync/redsync.
type redlock struct {
	rs  *redsync.Redsync
	key string
	set settings
}

// NewRedlock returns redlock: the Redlock algorithm over independent
// masters (five, usually), by go-redsync/redsync — a grant is a majority
// of masters that took the key within the TTL less the time it took and a
// clock drift allowance. It gives no fencing token (Grant.Token is zero):
// a holder paused past its TTL cannot be told apart from the next by
// anything the store sees.
func NewRedlock(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	set, err := settingsOf(opts)
	if err != nil {
		return nil, err
	}
	if len(servers) == 0 {
		return nil, fmt.Errorf("%w: Redlock needs its masters, got none", ErrBadOptions)
	}
	pools := make([]redsyncredis.Pool, len(servers))
	for i, c := range servers {
		pools[i] = goredis.NewPool(c)
	}
	return &redlock{rs: redsync.New(pools...), key: set.prefix + name, set: set}, nil
}

func (l *redlock) Acquire(ctx context.Context) (lock.Grant, error) {
	m := l.rs.NewMutex(l.key, redsync.WithExpiry(l.set.ttl), redsync.WithTries(math.MaxInt32),
		redsync.WithRetryDelay(l.set.retry))
	if err := m.LockContext(ctx); err != nil {
		if ctx.Err() != nil {
			return lock.Grant{}, ctx.Err()
		}
		return lock.Grant{}, fmt.Errorf("redislock: redlock %s: %w", l.key, err)
	}
	return lock.Grant{Key: l.key, Value: m.Value()}, nil
}

func (l *redlock) Release(ctx context.Context, g lock.Grant) error {
	ok, err := l.rs.NewMutex(g.Key, redsync.WithValue(g.Value)).UnlockContext(ctx)
	if ok {
		return nil
	}
	var taken *redsync.ErrTaken
	if err == nil || errors.Is(err, redsync.ErrLockAlreadyExpired) || errors.As(err, &taken) {
		return lock.ErrNotHeld
	}
	return fmt.Errorf("redislock: releasing %s: %w", g.Key, err)
}

func (l *redlock) Close() error { return nil }
