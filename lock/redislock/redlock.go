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
)

// redlock is Redlock over independent masters, by go-redsync/redsync.
type redlock struct {
	rs   *redsync.Redsync
	key  string
	opts Options
}

// NewRedlock returns redlock: the Redlock algorithm over independent
// masters (five, usually), by go-redsync/redsync — a grant is a majority
// of masters that took the key within the TTL less the time it took and a
// clock drift allowance. It gives no fencing token (Grant.Token is zero):
// a holder paused past its TTL cannot be told apart from the next by
// anything the store sees.
func NewRedlock(servers []*redis.Client, name string, opts Options) (Locker, error) {
	opts, err := opts.withDefaults()
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
	return &redlock{rs: redsync.New(pools...), key: opts.Prefix + name, opts: opts}, nil
}

func (l *redlock) Acquire(ctx context.Context) (Grant, error) {
	m := l.rs.NewMutex(l.key, redsync.WithExpiry(l.opts.TTL), redsync.WithTries(math.MaxInt32),
		redsync.WithRetryDelay(l.opts.Retry))
	if err := m.LockContext(ctx); err != nil {
		if ctx.Err() != nil {
			return Grant{}, ctx.Err()
		}
		return Grant{}, fmt.Errorf("redislock: redlock %s: %w", l.key, err)
	}
	return Grant{Key: l.key, Value: m.Value()}, nil
}

func (l *redlock) Release(ctx context.Context, g Grant) error {
	ok, err := l.rs.NewMutex(g.Key, redsync.WithValue(g.Value)).UnlockContext(ctx)
	if ok {
		return nil
	}
	var taken *redsync.ErrTaken
	if err == nil || errors.Is(err, redsync.ErrLockAlreadyExpired) || errors.As(err, &taken) {
		return ErrNotHeld
	}
	return fmt.Errorf("redislock: releasing %s: %w", g.Key, err)
}

func (l *redlock) Close() error { return nil }
