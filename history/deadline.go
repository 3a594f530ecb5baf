package history

import "time"

// How the deadline check judges an acquire against its deadline
// (Event.Deadline).
const (
	// DeadlineGrace is how long past its deadline an acquire may still
	// return a grant: time for a correct lock that had its answer in hand
	// to hand it over. A grant returned later is one its caller never sees
	// — it gave up at its deadline — and the deadline check FAILs it.
	DeadlineGrace = time.Second
	// DeadlineWait is how long past an acquire's deadline the lab waits for
	// it before it stops waiting and records it as unanswered: a lock that
	// had not returned by then ignores its context, and the deadline check
	// FAILs it. An error returned late, but before, is not judged: etcd's
	// own Mutex cleans up a failed wait on its client's context, not the
	// caller's, and returns late while its member is down.
	DeadlineWait = 10 * time.Second
)
