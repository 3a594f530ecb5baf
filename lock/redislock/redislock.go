package redislock

import (
	"cmp"
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

// Errors. Test them with errors.Is. A grant no longer held is
// lock.ErrNotHeld, a TTL below a second lock.ErrBadTTL, as on every store.
var (
	// ErrUnknownLock: no Redis lock of that name.
	ErrUnknownLock = errors.New("redislock: unknown lock")
	// ErrBadOptions: no server to lock on, or more than the lock takes.
	ErrBadOptions = errors.New("redislock: bad options")
)

// DefaultRetry is how long a waiter waits before it tries again, where
// lock.Options.Retry is zero.
const DefaultRetry = 50 * time.Millisecond

// settings are lock.Options as a Redis lock uses them.
type settings struct {
	ttl    time.Duration // the key's expiry (PX)
	prefix string
	retry  time.Duration
}

func settingsOf(o lock.Options) (settings, error) {
	if o.TTL == 0 {
		o.TTL = lock.DefaultTTL
	}
	if o.TTL < 1 {
		return settings{}, fmt.Errorf("%w, got %d", lock.ErrBadTTL, o.TTL)
	}
	return settings{ttl: time.Duration(o.TTL) * time.Second, prefix: cmp.Or(o.Prefix, lock.DefaultPrefix),
		retry: cmp.Or(o.Retry, DefaultRetry)}, nil
}

// Factory makes a Locker for the lock called name on servers: one primary
// (its client may follow a failover), or Redlock's independent masters.
type Factory = lock.Factory[[]*redis.Client]

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
