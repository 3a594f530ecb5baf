package redislock

import (
	"fmt"
	"slices"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/knownbad"
	"github.com/redis/go-redis/v9"
)

// Lock describes one Redis lock the lab runs by name: everything the lab
// knows of it, in one place.
type Lock = lock.Descriptor[[]*redis.Client]

// locks are the Redis locks: the ones people use, then the known-bad.
var locks = []Lock{
	{Name: "redis-setnx", Factory: NewSetNX,
		About: "real Redis: SET NX PX with a random value and an INCR token, released by compare-and-delete",
		// Nothing renews the key: a holder that works longer than the TTL
		// loses the lock while it works.
		Weak: map[string]string{"slow-holder": "lease-kept", "gave-up": "lease-kept", "link-blip": "lease-kept",
			"slow-link": "lease-kept"}},
	{Name: "redis-watchdog", Factory: NewWatchdog,
		About: "redis-setnx renewed every TTL/3 while held (Redisson's watchdog); its holder told when a renewal finds the key gone, or a TTL after the last one answered"},
	{Name: "redlock", Factory: NewRedlock, Masters: RedlockMasters,
		About: "Redlock over five independent Redis masters (go-redsync/redsync): no fencing token",
		// Nothing extends the keys while held, as redsync ships (Extend is
		// the caller's to call): a holder that works longer than the TTL
		// loses the lock while it works.
		Weak: map[string]string{"slow-holder": "lease-kept", "gave-up": "lease-kept"}},
	{Name: "redis-del", Factory: NewDel,
		About: "redis-setnx released by a plain DEL: known-bad",
		Bad: &lock.Regression{
			Name: "redis-del",
			Bug: "releases by a plain DEL of the lock key: a holder whose key expired while it worked deletes the next " +
				"holder's key, and a third client is granted beside the second (the oversell of a Redis lock released " +
				"without comparing its value)",
			Link:      "https://redis.io/docs/latest/develop/use/patterns/distributed-locks/",
			Scenarios: []string{"stale-release"},
			Check:     "validity",
		}},
	{Name: "redis-get-del", Factory: NewGetDel,
		About: "redis-setnx released by GET, compare, then DEL in two commands: known-bad",
		Bad: &lock.Regression{
			Name: "redis-get-del",
			Bug: "releases by a GET, a comparison in the client and a DEL: a holder whose key expires between the two " +
				"commands, and is granted to the next client, deletes that client's key, and a third client is granted " +
				"beside the second (the check and the delete must be one script)",
			Link:      "https://redis.io/docs/latest/develop/use/patterns/distributed-locks/",
			Scenarios: []string{"split-release"},
			Check:     "validity",
		}},
	{Name: "redis-setnx-expire", Factory: NewSetNXExpire,
		About: "redis-setnx taken by SETNX, then given its expiry by PEXPIRE: known-bad",
		Bad: &lock.Regression{
			Name: "redis-setnx-expire",
			Bug: "takes the lock's key by SETNX and gives it its expiry by a PEXPIRE after it: a client whose PEXPIRE " +
				"never arrives (its connection broke between the two commands, its process died) leaves a key that " +
				"never expires, and the lock is held by nobody for ever (SET NX PX takes the key and its expiry in " +
				"one command)",
			Link:      "https://redis.io/docs/latest/commands/setnx/",
			Scenarios: []string{"split-acquire", "lost-acquire"},
			Check:     "liveness",
		}},
	{Name: "redis-deaf", Factory: NewDeafWatchdog,
		About: "redis-watchdog told of a lost key only by a renewal's answer: known-bad",
		Bad: &lock.Regression{
			Name: "redis-deaf",
			Bug: "tells its holder the lock is lost (Grant.Lost) only when a renewal's answer says the key is gone or " +
				"another's — which a holder cut off from Redis never hears: its key expires, the next client is " +
				"granted, and it works on, told nothing (a watchdog knows its key is gone a TTL after the last " +
				"renewal that was answered, wherever it is cut off from)",
			Link:      "https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html",
			Scenarios: []string{"holder-told"},
			Check:     "told-lost",
		}},
	{Name: "redis-renew-gives-up", Factory: NewRenewGivesUp,
		About: "redis-watchdog whose watchdog stops for good at its first renewal that fails: known-bad",
		Bad: &lock.Regression{
			Name: "redis-renew-gives-up",
			Bug: "the watchdog stops renewing for good at the first renewal that fails, a transient error taken for a " +
				"lost lock, and tells nobody: a link that fails one way for a moment as it renews lets the key expire " +
				"a TTL later, and the next client is granted while the holder still works (Redisson's watchdog stopped " +
				"so on a BUSY answer)",
			Link:      "https://github.com/redisson/redisson/pull/3334",
			Scenarios: []string{"link-blip"}, Check: "lease-kept",
		}},
	{Name: "redis-renew-late", Factory: NewRenewLate,
		About: "redis-setnx renewed a TTL less a fiftieth after each renewal's answer: known-bad",
		Bad: &lock.Regression{
			Name: "redis-renew-late",
			Bug: "renews the key a TTL less a fiftieth after the last renewal's answer, not after it was sent: on a " +
				"link slow by more than a fiftieth of the TTL each way, a renewal reaches Redis after the key has " +
				"expired, and the next client is granted while the holder still works",
			Link:      "https://redis.io/docs/latest/develop/use/patterns/distributed-locks/",
			Scenarios: []string{"slow-link"}, Check: "lease-kept",
		}},
	{Name: "redis-wall-deadline", Factory: NewWallDeadline, Program: true,
		About: "a Redis lock run as a program (lock/redislock/deadline-lock.sh) that tells its holder at a deadline counted on the wall clock: known-bad",
		Bad: &lock.Regression{
			Name: "redis-wall-deadline",
			Bug: "counts its key's TTL on the wall clock and tells its holder the lock is lost (the protocol's \"lost\") " +
				"only when that count runs out: a clock set back while it holds (an NTP step) adds as much to the count, and " +
				"one that runs slow stretches it, " +
				"and the holder works on, told nothing, long after its key expired and the next client was granted (a " +
				"lease is counted on a monotonic clock: deadline-lock.sh's default)",
			Link:      "https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html",
			Scenarios: []string{"client-clock-back", "client-clock-slow"}, Check: "told-lost",
		}},
	{Name: "redlock-half", Factory: NewRedlockHalf, Masters: RedlockMasters,
		About: "Redlock written by hand that grants on half its masters, two of five, not a majority: known-bad",
		Bad: &lock.Regression{
			Name: "redlock-half",
			Bug: "counts a grant at half its masters rounded down (len/2), not a majority (len/2+1): a client that " +
				"reaches only the two masters another holder could not is granted beside it (the quorum of Redlock " +
				"is N/2+1: two majorities of one set of masters always share a master)",
			Link:      "https://redis.io/docs/latest/develop/use/patterns/distributed-locks/",
			Scenarios: []string{"redlock-minority"}, Check: "validity",
		}},
	{Name: "redis-ignores-deadline", Factory: knownbad.IgnoringDeadlineFactory(NewWatchdog),
		About: "redis-watchdog waited on with a context of its own, not the caller's: known-bad",
		Bad:   ptr(knownbad.IgnoringDeadlineRegression("redis-ignores-deadline"))},
}

func ptr[T any](v T) *T { return &v }

// Locks lists the Redis locks, the ones people use first, then the
// known-bad; a fresh slice each call.
func Locks() []Lock { return slices.Clone(locks) }

// Find returns the Redis lock called name.
func Find(name string) (Lock, error) {
	l, ok := lock.Find(locks, name)
	if !ok {
		return Lock{}, fmt.Errorf("%w %q", ErrUnknownLock, name)
	}
	return l, nil
}

// Lookup returns the factory of the Redis lock called name.
func Lookup(name string) (Factory, error) {
	l, err := Find(name)
	return l.Factory, err
}

// Names lists the Redis locks people use, in a fixed order.
func Names() []string { return names(false) }

// KnownBad lists the deliberately broken Redis locks.
func KnownBad() []string { return names(true) }

func names(bad bool) []string {
	var out []string
	for _, l := range locks {
		if (l.Bad != nil) == bad {
			out = append(out, l.Name)
		}
	}
	return out
}

// Regressions are the known-bad Redis locks, each with the catalog
// scenarios that must catch it and the check that does (their Factory is
// etcd's and nil: Find makes them).
func Regressions() []lock.Regression { return lock.Regressions(locks) }
