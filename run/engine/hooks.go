package engine

import (
	"context"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
)

// A SessionStore is a store whose locks rest on a session each client
// keeps for itself (etcd's lease), which the store may end under a lock
// that has not noticed yet: the client then makes its lock anew, as a real
// one watching its session would.
type SessionStore interface {
	// Prepare is asked before each acquire of client's: renew says its
	// session is gone and it makes its lock anew first (whether the old
	// lock has noticed yet is timing, not the lock's behaviour).
	Prepare(ctx context.Context, client string) (renew bool)
	// Releasing is asked just before client's release of g (resting on
	// lease) is sent.
	Releasing(ctx context.Context, client string, g lock.Grant, lease int64)
	// Failed is asked after an acquire or release of client's failed:
	// expired says its session is gone (whatever the lock said), renew
	// that it makes its lock anew now.
	Failed(ctx context.Context, client string, f Failure) (expired, renew bool)
}

// Failure is a step of a client's lock that failed, as SessionStore.Failed
// hears it.
type Failure struct {
	Err error
	// Release: the step was a release, of a grant on Lease; Latest, of
	// the grant the client holds (not an older one, retried).
	Release, Latest bool
	Lease           int64
	// Grant is the grant a release was of.
	Grant lock.Grant
}

// A GrantChecker looks at each grant once it is recorded: what the grant
// says against what the store has (a token that is not what the store
// made it).
type GrantChecker interface {
	Granted(ctx context.Context, client string, g lock.Grant)
}

// A ReleaseChecker looks, after a release that answered released, at
// whether the store still holds the grant (an unlock sent on another
// session than the one that holds it): Kept reports so, and the history
// records it (history.ObservedReleaseKept).
type ReleaseChecker interface {
	Kept(ctx context.Context, client string, lease int64, g lock.Grant) (bool, error)
}

// A ConnStore keeps a resource of its own (etcd-guarded): Conn is
// client's own connection to it (see run.InSection).
type ConnStore interface {
	Conn(client string) resource.Conn
}

// An AnswerCounter counts the store's answers to each client's requests
// itself (the chunks its links carry count answers to streams too): a
// waiter is answered when the count grows.
type AnswerCounter interface {
	Answered(client string) int64
}

// A WaiterShower can show a waiter by what it wrote (a key of its
// session's): WaitQueued takes that at once.
type WaiterShower interface {
	Shows(ctx context.Context, client string) (bool, error)
}

// A Crasher has the store's side of a client die with its process, and
// start again with nothing (a new connection).
type Crasher interface {
	Crashed(client string) error
}

// A ClientCloser keeps something of each client's across its locks (etcd's
// connection): CloseClient closes it when the run finishes, once the
// client's lock is closed and before the lab waits for an Acquire it
// abandoned (which may end only with it).
type ClientCloser interface {
	CloseClient(client string) error
}
