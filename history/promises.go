package history

import "time"

// How the deadline and told-lost checks judge what a lock promises.
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
	// LostGrace is how long after the server ended a held grant's lease
	// its Grant.Lost may take to close: etcd's client gives up on a lease
	// a TTL after the last keep-alive answer, which is when the server
	// ends it too, and looks each second.
	LostGrace = 2 * time.Second
)
