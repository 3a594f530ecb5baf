package scenarios

import (
	"time"

	"github.com/locklab/locklab/run"
)

// The catalog's own bounds, where a lesson needs more than
// run.DefaultOpTimeout or a TTL of its own.

// leaderKilledTTL is leader-killed's session timeout in seconds: a session
// must outlive the election and its client's move to another server
// (go-zookeeper waits a second after each round of servers that would not
// serve it).
const leaderKilledTTL = 3

// serverIsolatedTTL is server-isolated's session timeout in seconds: c1's
// session must outlive its server's noticing the quorum gone (its
// syncLimit, two seconds) and c1's move to another server.
const serverIsolatedTTL = 5

// leaderKilledOpTimeout bounds an operation of leader-killed: c2's
// acquire waits through the election, the clients' moves and c1's work.
const leaderKilledOpTimeout = 20 * time.Second

// slowOpTimeout bounds an operation in slow-holder: a waiter may wait for
// every other client's work (at most 1.25 + 1.25 + 2.5 TTLs).
const slowOpTimeout = 15 * time.Second

// lostAcquireTTL is lost-acquire's lease TTL in seconds, 3 as
// retried-release's: a client whose answers are cut hears no keep-alive
// answer from its acquire's write until its link is severed and its
// session's keep-alive stream is open again — etcd's client waits half a
// second before it reopens one, and renews on a half-second tick — and on
// 1 s leases its session could end on its side meanwhile (a loaded CI
// runner saw it: the next acquire said "session expired", not what the
// lesson is about).
const lostAcquireTTL = 3

// lostAcquireOpTimeout bounds an operation of lost-acquire: the acquire
// after the lost ones must be able to wait past the bound on granting again
// (a lock that wedges is caught by an acquire that waited that long, not
// by one given up before), and a lock that leaves a key to its lease (a
// process that exits with its session) needs a lease's time.
var lostAcquireOpTimeout = run.RegrantWithin(lostAcquireTTL) + lostAcquireTTL*time.Second

// lapseOpTimeout bounds an operation of expire-while-waiting-lapse: the
// waiter's acquire waits out its own lease's lapse (a TTL from its last
// keep-alive, and the server's noticing), c1's release, the heal and its
// client's reconnection before it hears anything — at the default 2 s, a
// busy machine timed out a lock that would have answered as it should.
const lapseOpTimeout = 5 * time.Second

// blipOpTimeout bounds an operation of link-blip: a waiter waits out a
// holder that works for three 3 s TTLs (a lock that gives its renewing
// up at the blip loses its lease within about two, with a busy runner's
// margin), and a blip.
const blipOpTimeout = 15 * time.Second

// slowLinkOpTimeout bounds an operation of slow-link: a waiter waits out a
// holder that works past its TTL (4 s), over a slow link.
const slowLinkOpTimeout = 15 * time.Second

// crashOpTimeout bounds an operation of crashed-holder: the waiter's
// acquire spans the crashed holder's lease running out (one TTL, and the
// server's expiry check after it).
const crashOpTimeout = 10 * time.Second

// drawnOpTimeout bounds an operation of random: a drawn script queues a
// waiter behind a holder and may then pause or cut that holder, so the
// waiter's acquire spans the holder's lease running out (a TTL, and the
// server's expiry check after it) — at the default 2 s, a busy machine
// timed such a waiter out, and the script ran on otherwise than drawn.
const drawnOpTimeout = 5 * time.Second

// splitReleaseOpTimeout bounds an operation of split-release: c1's release,
// stopped between its requests, waits out its lease's lapse (a TTL), c2's
// grant and c3's queueing before the rest of it reaches the server; at the
// default 2 s it timed out while stopped, with its answer on the way.
const splitReleaseOpTimeout = 10 * time.Second

// splitAcquireTTL is split-acquire's lease TTL in seconds: a ZooKeeper
// session of 2 s outlives a loaded machine's reconnect (1 s did not, in
// the lost-create test).
const splitAcquireTTL = 2

// splitAcquireOpTimeout bounds an operation of split-acquire: c2's acquire
// must be able to wait past the bound on granting again, so that a lock
// that wedges is caught by an acquire that waited that long.
var splitAcquireOpTimeout = run.RegrantWithin(splitAcquireTTL) + splitAcquireTTL*time.Second

// clockHeldOpTimeout bounds an operation of clock-jump-held: a waiter
// waits out a holder that works for three 1 s sessions' timeouts after the
// clocks jump, with a busy runner's margin.
const clockHeldOpTimeout = 10 * time.Second

// minorityOpTimeout bounds an operation of redlock-minority: c2 asks
// while c1 works for 2 s, and is granted only once c1 has released.
const minorityOpTimeout = 10 * time.Second
