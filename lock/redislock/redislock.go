package redislock

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
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

// RedlockMasters is how many independent masters Redlock runs over, as
// its authors recommend.
const RedlockMasters = 5
