package redislock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lock"
)

// acquireScript is SET key value NX PX ttl with a token: the grant INCRs
// the lock's counter in the same step. A key that already holds this
// attempt's value (an earlier try of the same Acquire whose answer was
// lost) is adopted, its expiry renewed, its token read back. It answers
// the token, or 0 when the lock is another's.
var acquireScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return tonumber(redis.call('GET', KEYS[2]) or '0')
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0`)

// releaseScript deletes the key only if it still holds the grant's value.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

// renewScript extends the key's expiry only if it still holds the grant's
// value.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)

// single is a lock on one primary: SET NX PX with a random value.
type single struct {
	c   *redis.Client
	key string
	set settings
	// renew: a watchdog extends the key every TTL/3 while it is held.
	renew bool
	// plainDel: release is a plain DEL, whoever's the key is (known-bad).
	plainDel bool

	mu   sync.Mutex
	stop func() // the running watchdog's, or nil
}

// NewSetNX returns redis-setnx: SET key value NX PX ttl with a random
// value, retried every lock.Options.Retry while the lock is taken, released by
// a script that deletes the key only if it still holds the grant's value.
// Nothing renews the key: a holder that works longer than the TTL loses
// the lock while it still works.
func NewSetNX(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	return newSingle(servers, name, opts, false, false)
}

// NewWatchdog returns redis-watchdog: redis-setnx whose holder renews the
// key every TTL/3 while it holds it (Redisson's watchdog), by a script that
// extends it only if it still holds the grant's value. Grant.Lost is closed
// when a renewal finds the key gone or another's.
func NewWatchdog(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	return newSingle(servers, name, opts, true, false)
}

// NewDel returns the known-bad redis-del: redis-setnx released by a plain
// DEL. A holder whose key expired while it worked deletes the next
// holder's key when it releases, and a third client is granted beside the
// second: the oversell of a Redis lock released without comparing its
// value.
func NewDel(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	return newSingle(servers, name, opts, false, true)
}

func newSingle(servers []*redis.Client, name string, opts lock.Options, renew, plainDel bool) (lock.Locker, error) {
	set, err := settingsOf(opts)
	if err != nil {
		return nil, err
	}
	if len(servers) != 1 {
		return nil, fmt.Errorf("%w: a lock on one primary needs one server, got %d", ErrBadOptions, len(servers))
	}
	return &single{c: servers[0], key: set.prefix + name, set: set, renew: renew, plainDel: plainDel}, nil
}

func (l *single) Acquire(ctx context.Context) (lock.Grant, error) {
	value := randomValue()
	keys := []string{l.key, l.key + ":token"}
	for {
		token, err := acquireScript.Run(ctx, l.c, keys, value, l.set.ttl.Milliseconds()).Int64()
		if err == nil && token > 0 {
			g := lock.Grant{Key: l.key, Value: value, Token: token}
			if l.renew {
				g.Lost = l.watch(g)
			}
			return g, nil
		}
		if errors.Is(err, redis.ErrClosed) {
			return lock.Grant{}, err // its client is closed: nothing will ever answer
		}
		if err := wait(ctx, l.set.retry); err != nil {
			l.abandon(value)
			return lock.Grant{}, err
		}
	}
}

// abandon deletes value's key if an attempt whose answer was lost wrote
// it, so that a given-up Acquire holds nothing.
func (l *single) abandon(value string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	releaseScript.Run(ctx, l.c, []string{l.key}, value) //nolint:errcheck // at best: it expires anyway
}

// watch renews g's key every TTL/3 until stopped or a renewal finds it
// gone; the channel it returns is closed then. A renewal that fails on the
// link is tried again at the next tick, as Redisson's watchdog does.
func (l *single) watch(g lock.Grant) <-chan struct{} {
	lost := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(l.set.ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			rctx, rcancel := context.WithTimeout(ctx, l.set.ttl/3)
			n, err := renewScript.Run(rctx, l.c, []string{g.Key}, g.Value, l.set.ttl.Milliseconds()).Int64()
			rcancel()
			if err == nil && n == 0 {
				close(lost)
				return
			}
		}
	}()
	l.mu.Lock()
	l.stop = func() { cancel(); <-done }
	l.mu.Unlock()
	return lost
}

// stopWatch stops the running watchdog, if any.
func (l *single) stopWatch() {
	l.mu.Lock()
	stop := l.stop
	l.stop = nil
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
}

func (l *single) Release(ctx context.Context, g lock.Grant) error {
	l.stopWatch()
	var (
		n   int64
		err error
	)
	if l.plainDel {
		n, err = l.c.Del(ctx, g.Key).Result()
	} else {
		n, err = releaseScript.Run(ctx, l.c, []string{g.Key}, g.Value).Int64()
	}
	switch {
	case err != nil:
		return fmt.Errorf("redislock: releasing %s: %w", g.Key, err)
	case n == 0:
		return lock.ErrNotHeld
	}
	return nil
}

func (l *single) Close() error {
	l.stopWatch()
	return nil
}
