package run

import (
	"errors"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
)

// DefaultOpTimeout bounds one acquire, critical section or release; past it
// the operation is recorded as info (unknown outcome).
const DefaultOpTimeout = 2 * time.Second

// OpTimeoutFor is the operations' timeout for leases of ttl seconds:
// DefaultOpTimeout for each second, as a scenario scaled to longer leases
// gets (a run whose leases are longer gives a slow machine as much more
// time for each operation).
func OpTimeoutFor(ttl int) time.Duration { return DefaultOpTimeout * time.Duration(max(ttl, 1)) }

// Classify marks the errors that certainly changed nothing, on any store:
// the lock's own refusals, and a store's refusal of a request on a session
// it no longer has (etcd's "lease not found", see StoreErrors).
func Classify(err error) error {
	if errors.Is(err, lock.ErrSessionExpired) || errors.Is(err, lock.ErrNotHeld) || errors.Is(err, lock.ErrNoToken) ||
		err != nil && storeClass(err) == FailSessionExpired {
		return history.Definite(err)
	}
	return err
}
