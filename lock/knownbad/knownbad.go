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

// IgnoringDeadlineFactory is f, each of its Lockers IgnoringDeadline:
// how a store's registry makes its deadline-ignoring known-bad lock.
func IgnoringDeadlineFactory[C any](f lock.Factory[C]) lock.Factory[C] {
	return func(client C, name string, opts lock.Options) (lock.Locker, error) {
		l, err := f(client, name, opts)
		if err != nil {
			return nil, err
		}
		return IgnoringDeadline(l), nil
	}
}

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
