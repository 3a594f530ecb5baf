package bench

import (
	"context"

	"github.com/locklab/locklab/internal/registry"
)

// A Store measures the locks of a store other than the etcd cluster bench
// runs on (Redis, ZooKeeper), on servers it starts for them. A store's
// bench package registers one when a program imports it.
type Store struct {
	// Name is the store's name, as --store names it.
	Name string
	// Locks are the locks people use of it, by name: those bench measures
	// when asked for every lock.
	Locks func() []string
	// Open starts servers for the lock called name — one of the store's,
	// or a lock run as a process when store names this one (a store may
	// answer for more than one name: Redis for Redlock's masters too) —
	// and measures their hand-off floor; false if the lock is not the
	// store's.
	Open func(ctx context.Context, name, store string) (*Opened, bool, error)
}

// Opened is a store's servers, started for one lock: their hand-off floor,
// the lock's measurement on them, and what closes them.
type Opened struct {
	// Floor is one write and one read back to back on the servers: the
	// least a hand-off can cost there. FloorOf says what it was measured
	// on and how ("a Redis primary (one SET + one GET)").
	Floor   Distribution
	FloorOf string
	// Measure measures the lock on them, the servers' CPU apart from the
	// clients'.
	Measure func(Config) (Result, error)
	Close   func()
}

// FloorSamples is how many write-and-read pairs measure a hand-off floor.
const FloorSamples = 200

// stores are the registered stores.
var stores registry.List[Store]

// RegisterStore adds a store whose locks bench measures from then on.
func RegisterStore(s Store) { stores.Add(s) }

// Stores are the registered stores, in the order registered.
func Stores() []Store { return stores.All() }
