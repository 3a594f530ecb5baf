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

// releaseBy is how a lock on one primary releases a grant.
type releaseBy int

const (
	// releaseChecked: one script deletes the key only if it still holds
	// the grant's value.
	releaseChecked releaseBy = iota
	// releasePlainDel: a plain DEL, whoever's the key is (known-bad).
	releasePlainDel
	// releaseGetDel: GET, compare, then DEL, in two commands (known-bad):
	// between them the key may expire and be another's.
	releaseGetDel
)

// single is a lock on one primary: SET NX PX with a random value.
type single struct {
	c   *redis.Client
	key string
	set settings
	// renew: a watchdog extends the key every TTL/3 while it is held.
	renew bool
	// release is how the grant is released (releaseChecked, or a
	// known-bad way).
	release releaseBy
	// setThenExpire: the key is taken by SETNX and given its expiry by a
	// PEXPIRE after it, two commands (known-bad).
	setThenExpire bool
	// deaf: the watchdog tells its holder only when a renewal's answer
	// says the key is gone or another's, never when none is answered for
	// a TTL (known-bad).
	deaf bool
	// renewer, if set, renews the held grant in the watchdog's place (a
	// known-bad rhythm: see renewers.go); it tells nobody by a count of
	// its own.
	renewer renewer

	mu   sync.Mutex
	stop func() // the running watchdog's, or nil
}

// NewSetNX returns redis-setnx: SET key value NX PX ttl with a random
// value, retried every lock.Options.Retry while the lock is taken, released by
// a script that deletes the key only if it still holds the grant's value.
// Nothing renews the key: a holder that works longer than the TTL loses
// the lock while it still works.
func NewSetNX(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	return newSingle(servers, name, opts, false, releaseChecked)
}

// NewWatchdog returns redis-watchdog: redis-setnx whose holder renews the
// key every TTL/3 while it holds it (Redisson's watchdog), by a script that
// extends it only if it still holds the grant's value. Grant.Lost is closed
// when a renewal finds the key gone or another's, or a TTL after the last
// renewal that was answered was sent (the key has expired by then).
func NewWatchdog(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	return newSingle(servers, name, opts, true, releaseChecked)
}

// NewDel returns the known-bad redis-del: redis-setnx released by a plain
// DEL. A holder whose key expired while it worked deletes the next
// holder's key when it releases, and a third client is granted beside the
// second: the oversell of a Redis lock released without comparing its
// value.
func NewDel(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	return newSingle(servers, name, opts, false, releasePlainDel)
}

// NewGetDel returns the known-bad redis-get-del: redis-setnx released by
// a GET, a comparison in the client, then a DEL — the check and the delete
// in two commands. A holder whose key expires between them, and is
// granted to the next client, deletes that client's key with its DEL, and
// a third client is granted beside the second.
func NewGetDel(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	return newSingle(servers, name, opts, false, releaseGetDel)
}

// NewSetNXExpire returns the known-bad redis-setnx-expire: redis-setnx
// whose key is taken by SETNX and given its expiry by a PEXPIRE after it,
// in two commands. A client whose PEXPIRE never arrives (its connection
// broke between them, its process died) leaves a key that never expires:
// the lock is held by nobody, for ever.
func NewSetNXExpire(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	l, err := newSingle(servers, name, opts, false, releaseChecked)
	if err == nil {
		l.(*single).setThenExpire = true
	}
	return l, err
}

// NewDeafWatchdog returns the known-bad redis-deaf: redis-watchdog that
// tells its holder (Grant.Lost) only when a renewal's answer says the key
// is gone or another's — which a holder cut off from Redis never hears:
// its key expires, the next client is granted, and it works on, told
// nothing, for as long as the cut lasts.
func NewDeafWatchdog(servers []*redis.Client, name string, opts lock.Options) (lock.Locker, error) {
	l, err := newSingle(servers, name, opts, true, releaseChecked)
	if err == nil {
		l.(*single).deaf = true
	}
	return l, err
}

func newSingle(servers []*redis.Client, name string, opts lock.Options, renew bool, release releaseBy) (lock.Locker, error) {
	set, err := settingsOf(opts)
	if err != nil {
		return nil, err
	}
	if len(servers) != 1 {
		return nil, fmt.Errorf("%w: a lock on one primary needs one server, got %d", ErrBadOptions, len(servers))
	}
	loadScripts(servers[0], acquireScript, releaseScript, renewScript)
	return &single{c: servers[0], key: set.prefix + name, set: set, renew: renew, release: release}, nil
}

// loadScripts has the server know scripts before the lock first runs
// them, as a server long in use does: each is sent by its SHA alone from
// the first call on, not first refused as unknown and sent whole. At best:
// a server that does not answer within a second is sent them whole later.
func loadScripts(c *redis.Client, scripts ...*redis.Script) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, s := range scripts {
		if s.Load(ctx, c).Err() != nil {
			return
		}
	}
}

func (l *single) Acquire(ctx context.Context) (lock.Grant, error) {
	value := randomValue()
	keys := []string{l.key, l.key + ":token"}
	for {
		token, err := l.take(ctx, keys, value)
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

// take sets the lock's key to value if it is free and answers the
// grant's token, or 0 when the lock is another's.
func (l *single) take(ctx context.Context, keys []string, value string) (int64, error) {
	if !l.setThenExpire {
		return acquireScript.Run(ctx, l.c, keys, value, l.set.ttl.Milliseconds()).Int64()
	}
	ok, err := l.c.SetNX(ctx, keys[0], value, 0).Result()
	if err != nil || !ok {
		return 0, err
	}
	if err := l.c.PExpire(ctx, keys[0], l.set.ttl).Err(); err != nil {
		return 0, err
	}
	return l.c.Incr(ctx, keys[1]).Result()
}

// abandon deletes value's key if an attempt whose answer was lost wrote
// it, so that a given-up Acquire holds nothing.
func (l *single) abandon(value string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	releaseScript.Run(ctx, l.c, []string{l.key}, value) //nolint:errcheck // at best: it expires anyway
}

// watch renews g's key every TTL/3 until stopped, or until a renewal
// finds it gone or another's, or none has been answered for a TTL (the
// key has expired by then, wherever the holder is cut off from); the
// channel it returns is closed then. A renewal that fails on the link is
// tried again at the next tick, as Redisson's watchdog does.
func (l *single) watch(g lock.Grant) <-chan struct{} {
	lost := make(chan struct{})
	var once sync.Once
	tell := func() { once.Do(func() { close(lost) }) }
	// expired tells the holder a TTL after the last renewal that was
	// answered was sent (the grant's, first): its key is gone by then,
	// whatever a renewal under way still waits for. (A deaf watchdog
	// keeps no such count.)
	expired := time.AfterFunc(l.set.ttl, tell)
	if l.deaf || l.renewer != nil {
		expired.Stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if l.renewer != nil {
			l.renewer(ctx, l, g, lost, tell)
			return
		}
		defer expired.Stop()
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
			sent := time.Now()
			rctx, rcancel := context.WithTimeout(ctx, l.set.ttl/3)
			n, err := renewScript.Run(rctx, l.c, []string{g.Key}, g.Value, l.set.ttl.Milliseconds()).Int64()
			rcancel()
			switch {
			case err == nil && n == 0:
				tell()
				return
			case err == nil && !l.deaf:
				expired.Reset(l.set.ttl - time.Since(sent))
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
	n, err := l.del(ctx, g)
	switch {
	case err != nil:
		return fmt.Errorf("redislock: releasing %s: %w", g.Key, err)
	case n == 0:
		return lock.ErrNotHeld
	}
	return nil
}

// del deletes g's key as the lock releases, and says how many keys went.
func (l *single) del(ctx context.Context, g lock.Grant) (int64, error) {
	switch l.release {
	case releasePlainDel:
		return l.c.Del(ctx, g.Key).Result()
	case releaseGetDel:
		v, err := l.c.Get(ctx, g.Key).Result()
		switch {
		case errors.Is(err, redis.Nil):
			return 0, nil
		case err != nil:
			return 0, err
		case v != g.Value:
			return 0, nil
		}
		return l.c.Del(ctx, g.Key).Result()
	}
	return releaseScript.Run(ctx, l.c, []string{g.Key}, g.Value).Int64()
}

func (l *single) Close() error {
	l.stopWatch()
	return nil
}
