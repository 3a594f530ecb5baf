// Package knownbad holds bugs the lab's known-bad locks are made of that
// belong to no store: each wraps a correct lock of any store and breaks
// one promise of lock.Locker's contract, so that every store's catalog can
// show that its lessons catch it.
package knownbad

import (
	"context"

	"github.com/locklab/locklab/lock"
)

// ignoringDeadline is a lock waited on with a context of its own: the
// caller's values, none of its deadline (a lock that waits on
// context.Background, or on a context it made once).
type ignoringDeadline struct{ lock.Locker }

// IgnoringDeadline returns l, its Acquire waiting on a context of its own:
// an acquire whose caller gave up at its deadline goes on waiting, and
// when the lock comes free it is granted to nobody, while the next client
// waits behind it. The gave-up lesson catches it (the deadline check).
func IgnoringDeadline(l lock.Locker) lock.Locker { return ignoringDeadline{l} }

func (l ignoringDeadline) Acquire(ctx context.Context) (lock.Grant, error) {
	return l.Locker.Acquire(context.WithoutCancel(ctx)) // the bug
}

// IgnoringDeadlineRegression describes the known-bad lock called name
// that IgnoringDeadline made: its bug, and the lesson and check that
// catch it (Factory left to the store's registry).
func IgnoringDeadlineRegression(name string) lock.Regression {
	return lock.Regression{
		Name: name,
		Bug: "the lock waits on a context of its own, not the caller's: an acquire whose caller gave up at its " +
			"deadline goes on waiting, and when the lock comes free it is granted to nobody while the next client " +
			"waits behind it",
		Link:      "https://github.com/pingcap/tidb/issues/61288",
		Scenarios: []string{"gave-up"}, Check: "deadline",
	}
}
