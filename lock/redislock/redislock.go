package redislock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lock"
)

// Errors. Test them with errors.Is.
var (
	// ErrNotHeld: Release was given a grant whose key no longer holds its
	// value (it expired, and perhaps another client holds the lock now).
	// Nothing was deleted.
	ErrNotHeld = errors.New("redislock: not held")
	// ErrUnknownLock: no Redis lock of that name.
	ErrUnknownLock = errors.New("redislock: unknown lock")
	// ErrBadOptions: a TTL below 10 ms, or no server to lock on.
	ErrBadOptions = errors.New("redislock: bad options")
)

// Grant is a held Redis lock.
type Grant struct {
	// Key is the lock key; Value the random value this grant wrote there,
	// which release and renewal compare before they act.
	Key, Value string
	// Token is a fencing token: an INCR of the lock's counter taken in the
	// same script as the grant, larger for every later grant while the
	// counter survives. Zero means the lock gives none (Redlock). Across a
	// failover to a replica that had not received the counter, tokens go
	// back: the fenced store decides what that costs.
	Token int64
	// Lost is closed once the lock's own renewal finds the key gone or
	// another's: nil for a lock that does not renew (it cannot tell).
	Lost <-chan struct{}
}

// Locker is one client's handle on one named Redis lock, used by one
// goroutine at a time: Acquire, then Release, then Acquire again. Acquire
// waits, trying again every Options.Retry, until it is granted or ctx
// ends (then it returns ctx's error and holds nothing).
type Locker interface {
	Acquire(ctx context.Context) (Grant, error)
	Release(ctx context.Context, g Grant) error
	// Close stops the Locker's renewal; a held grant is left to expire.
	Close() error
}

// Options configure a Redis lock.
type Options struct {
	// TTL is the key's expiry (PX). Zero means DefaultTTL.
	TTL time.Duration
	// Prefix is prepended to the lock name to form its key. Empty means
	// DefaultPrefix.
	Prefix string
	// Retry is how long a waiter waits before it tries again. Zero means
	// DefaultRetry.
	Retry time.Duration
}

// Defaults for Options fields left zero.
const (
	DefaultTTL    = time.Second
	DefaultPrefix = "locklab/locks/"
	DefaultRetry  = 50 * time.Millisecond
)

func (o Options) withDefaults() (Options, error) {
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.TTL < 10*time.Millisecond {
		return o, fmt.Errorf("%w: TTL %v is below 10ms", ErrBadOptions, o.TTL)
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Retry == 0 {
		o.Retry = DefaultRetry
	}
	return o, nil
}

// Factory makes a Locker for the lock called name on servers: one primary
// (its client may follow a failover), or Redlock's independent masters.
type Factory func(servers []*redis.Client, name string, opts Options) (Locker, error)

// Builtin returns the Redis locks by name, a fresh map each call: the
// ones people use, and the known-bad redis-del.
func Builtin() map[string]Factory { return maps.Clone(builtin) }

var builtin = map[string]Factory{
	"redis-setnx":    NewSetNX,
	"redis-watchdog": NewWatchdog,
	"redlock":        NewRedlock,
	"redis-del":      NewDel,
}

// Names lists the Redis locks people use, in a fixed order; KnownBad the
// deliberately broken ones.
func Names() []string { return []string{"redis-setnx", "redis-watchdog", "redlock"} }

// KnownBad lists the deliberately broken Redis locks.
func KnownBad() []string { return []string{"redis-del"} }

// Lookup returns the Redis lock called name.
func Lookup(name string) (Factory, error) {
	if f, ok := builtin[name]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownLock, name)
}

// randomValue is a grant's value: 16 random bytes, in hex.
func randomValue() string {
	var b [16]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// wait sleeps d, or returns ctx's error if it ends first.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Masters is how many independent masters the lock called name takes
// (Redlock's five), or zero for a lock on one primary with replicas.
func Masters(name string) int { return masters[name] }

// masters are the locks that take independent masters, and how many.
var masters = map[string]int{"redlock": RedlockMasters}

// RedlockMasters is how many independent masters Redlock runs over, as
// its authors recommend.
const RedlockMasters = 5

// Regressions are the known-bad Redis locks, each with the catalog
// scenarios that must catch it and the check that does (their Factory is
// etcd's and nil: Lookup makes them).
func Regressions() []lock.Regression {
	return []lock.Regression{{
		Name: "redis-del",
		Bug: "releases by a plain DEL of the lock key: a holder whose key expired while it worked deletes the next " +
			"holder's key, and a third client is granted beside the second (the oversell of a Redis lock released " +
			"without comparing its value)",
		Link:      "https://redis.io/docs/latest/develop/use/patterns/distributed-locks/",
		Scenarios: []string{"stale-release"},
		Check:     "validity",
	}}
}

// Weaknesses are the catalog lessons a Redis lock people use fails by its
// design, not by a bug — each scenario with the check that says so: the
// lab documents them as FAIL rather than hide them.
func Weaknesses(name string) map[string]string { return maps.Clone(weaknesses[name]) }

var weaknesses = map[string]map[string]string{
	// Nothing renews the key: a holder that works longer than the TTL
	// loses the lock while it works.
	"redis-setnx": {"slow-holder": "lease-kept"},
}
