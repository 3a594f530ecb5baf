package scenarios

import (
	"context"
	"embed"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/script"
)

//go:embed scripts/*.txt
var scripts embed.FS

// Expect is what a configuration is documented to get (see models).
type Expect = models.Expect

// Expectations. Any is reported but never gates: the outcome depends on
// timing the schedule does not fix (the random scenario on an unfenced
// resource).
const (
	ExpectPass = models.ExpectPass
	ExpectFail = models.ExpectFail
	ExpectAny  = models.ExpectAny
)

// Scenario is one entry of the catalog.
type Scenario struct {
	Name string
	// Lesson is what happens and why it matters, in a paragraph.
	Lesson string
	// Members is the cluster size it needs; MemberFaults says whether it
	// acts on members (so it cannot run on an external cluster).
	Members      int
	MemberFaults bool
	TTL          int
	// script is the file in scripts/ for a deterministic scenario; text,
	// if set, is the script itself (a script from outside the catalog, and
	// script then its file's name, for messages).
	script string
	text   string
	// exec, for a scenario driven by a workload, runs its plan on a run
	// (a script's steps run through package script).
	exec func(ctx context.Context, e script.Target, p Plan) error
	// Expect gives the expected verdict per resource (the lock does not
	// change it for the built-in locks).
	Expect func(resource string) Expect
	// Minimum is the least progress a run must make to be judged at all
	// (below it the run FAILs and never matches its expectation); it is
	// written into every history, so an offline check enforces it too.
	Minimum history.Minimum
	// Effects are what the lesson says happens; a run where one did not is
	// vacuous and cannot PASS (see Effect).
	Effects []Effect
	// opTimeout bounds one operation of the scenario's clients (zero:
	// run.DefaultOpTimeout).
	opTimeout time.Duration
	// draw, if set, derives the plan's parts that are drawn from the seed
	// (a drawn script, each slow holder's work); plan fills the rest.
	draw func(s Scenario, seed uint64, p *Plan)
	// scale is the factor Scaled made the leases longer by (0: 1); a
	// script's own setup ttl= is scaled by it too.
	scale int
	// needs are the capabilities it needs of a store beside what its
	// script's commands need (see Needs): a workload's faults, a shape of
	// store, a way the store behaves that the lesson is written for.
	needs []script.Capability
	// anyShape: the lesson runs on a store of any shape — one that
	// replicates the lock, or Redlock's independent masters — as it needs
	// of the store nothing but acquires, releases, pauses, cuts and
	// crashes of its clients.
	anyShape bool
	// seconds is about how long one configuration of it takes on 2 cores
	// (0: a few seconds at most). A run starts the longest first, so that
	// the last to finish are short ones; nothing else depends on it.
	seconds int
}

// regrantWithin bounds how long after the last fault heals a lock must grant
// again, on the 1 s leases the scenarios are written for (see
// run.RegrantWithin; Scaled makes it longer with the leases).
var regrantWithin = int64(run.RegrantWithin(1))

// handOffWithin bounds how long a waiter may be left waiting, never
// granted, while the lock is free (history.Minimum.HandOffWithin), on
// leases of ttl seconds: a TTL. A lock that waits by a watch hands a free
// lock over in milliseconds; one that polls must poll more often than its
// lease runs out.
func handOffWithin(ttl int) int64 { return int64(time.Duration(max(ttl, 1)) * time.Second) }

// minimum is the progress a run of s must make, as its histories' headers
// state it: s.Minimum, with the bound on handing a free lock over that its
// leases give (see handOffWithin).
func (s Scenario) minimum() history.Minimum {
	m := s.Minimum
	m.HandOffWithin = handOffWithin(s.TTL)
	return m
}

// unfencedFails is the expectation of the holder scenarios.
func unfencedFails(resource string) Expect {
	if resource == "unfenced" {
		return ExpectFail
	}
	return ExpectPass
}

func alwaysPass(string) Expect { return ExpectPass }

func alwaysFail(string) Expect { return ExpectFail }

// unfencedAny is the expectation of the scenarios that can cut a holder off
// from the cluster without meaning to: if the holder's own member dies or is
// isolated, its lease can lapse while it is inside its critical section, and
// its late write to an unfenced store may lose an update — or not, by timing.
// Reported, never gated; fenced and guarded stores must pass.
func unfencedAny(resource string) Expect {
	if resource == "unfenced" {
		return ExpectAny
	}
	return ExpectPass
}

// holderCutOff ends the lessons of the scenarios that use unfencedAny.
const holderCutOff = " If the lock holder's own member is the one cut off, its lease can lapse in the middle of its critical " +
	"section and its late write can hit an unfenced store after the next holder's — so that case is reported, not gated."

// Catalog lists every scenario in a fixed order, a fresh slice each call.
func Catalog() []Scenario { return slices.Clone(catalog) }

// catalog is every scenario in a fixed order: the lessons of servers
// restarted and clocks moved (serverlessons.go) last.
var catalog = slices.Concat(lessons, serverLessons)

// lessons are the catalog's lessons of clients, links and members.
var lessons = []Scenario{
	{
		Name: "paused-holder",
		Lesson: "c1 holds the lock and reads the counter, then freezes before its write (a GC pause, SIGSTOP) for longer " +
			"than its lease. The server lets the lease lapse and grants the lock to c2, which reads and writes. c1 wakes up " +
			"and writes too, with the grant it still believes in. Unfenced, one increment is lost; a fenced store rejects " +
			"c1's older token, and an etcd write guarded by c1's lock key finds the key gone. The fence must cover the " +
			"whole critical section, the read too: had the store only compared tokens between writes, c1's stale write " +
			"could land after c2's read and before c2's write, both writes would pass, and an update would be lost under " +
			"a correct lock. A lease is not a lock; a fencing token makes it one.",
		Members: 3, TTL: 1, script: "paused-holder.txt", Expect: unfencedFails,
		Minimum: history.Minimum{Grants: 2, Sections: 2, Accepted: 1},
		Effects: []Effect{
			leaseEndedDuring("c1", faults.PauseClient, "c1 was paused"),
			grantedDuring("c2", faults.PauseClient, "c1", "c1 was paused"),
		},
	},
	{
		Name: "isolated-holder",
		Lesson: "c1 holds the lock when the network between it and the cluster fails. Its keep-alives stop arriving; " +
			"the lease lapses; c2 is granted the lock and writes. The partition heals and c1, which noticed nothing, " +
			"writes with its old grant. An unfenced store takes the stale write; fenced and guarded stores refuse it.",
		Members: 3, TTL: 1, script: "isolated-holder.txt", Expect: unfencedFails,
		Minimum: history.Minimum{Grants: 2, Sections: 2, Accepted: 1},
		Effects: []Effect{
			leaseEndedDuring("c1", faults.CutClient, "c1's link was cut"),
			grantedDuring("c2", faults.CutClient, "c1", "c1 was cut off"),
		},
	},
	{
		Name: "expire-while-waiting",
		Lesson: "c2 waits in the queue behind c1 when its own session dies. Its place in the queue went with its lease, " +
			"so when c1 releases, c2 must be told its session expired — never that it acquired the lock (the etcd v3.4 " +
			"bug Jepsen found, fixed in v3.5).",
		Members: 3, TTL: 1, script: "expire-while-waiting.txt", Expect: alwaysPass,
		Minimum: history.Minimum{Grants: 1, Sections: 1, Accepted: 1},
		Effects: []Effect{queuedThenExpired("c2"), releasedWhileWaiting("c1", "c2")},
	},
	{
		Name:     "stale-release",
		anyShape: true,
		Lesson: "c1 freezes on its way to release the lock, its lease lapses, c2 is granted the lock and c3 queues " +
			"behind c2. Then c1 wakes and sends its release. A release must end only the grant it names: one that " +
			"deletes the lock's key by name, or whatever key holds the lock, frees c2's lock, and c3 is granted " +
			"beside c2. A correct lock answers c1 \"not held\" (or deletes only c1's own, long-gone key).",
		Members: 3, TTL: 1, script: "stale-release.txt", Expect: alwaysPass,
		Minimum: history.Minimum{Grants: 3, Sections: 3, Accepted: 3},
		Effects: []Effect{
			leaseEndedDuring("c1", faults.PauseClient, "c1 was paused before its release"),
			lateReleaseWhileHeld("c1", "c2", "c3"),
		},
	},
	{
		Name:     "split-release",
		anyShape: true,
		Lesson: "c1 releases, and the lab reads its requests off the wire: the first reaches the server, and c1 " +
			"freezes before the next one does. Its lease lapses, c2 is granted the lock and c3 queues behind c2; " +
			"then c1 wakes and the rest of its release arrives. A release whose check and delete are two commands " +
			"(GET, compare, DEL on Redis; a Get, then a Delete by name, on etcd) deletes c2's key, and c3 is granted " +
			"beside c2: the check and the delete must be one request (a script, a Txn, a conditional delete). A " +
			"release of one request takes effect before c1 freezes, " +
			"just after it, and the lesson shows it safe.",
		Members: 3, TTL: 1, script: "split-release.txt", Expect: alwaysPass, opTimeout: splitReleaseOpTimeout,
		Minimum: history.Minimum{Grants: 3, Sections: 3, Accepted: 3},
		Effects: []Effect{grantedDuring("c2", faults.PauseClient, "c1", "c1 was stopped in its release")},
	},
	{
		Name:     "split-acquire",
		anyShape: true,
		Lesson: "The lock has been used once (c2 took it and let it go). c1 asks for it, and the lab reads its " +
			"requests off the wire: its first write reaches the " +
			"server, and c1 freezes before its next request does; then c1's process dies. What c1's first write took " +
			"must go by itself, within a TTL, and c2, asking next, is granted. A lock that takes its key in one " +
			"command (SETNX) and gives it its expiry in the next (PEXPIRE) leaves a key that never expires: the lock " +
			"is held by nobody for ever, and the liveness check catches the wedge. An acquire that asks nothing after " +
			"its write (SET NX PX, a script) freezes just after it, holding the lock, and its key expires with its lease.",
		Members: 3, TTL: splitAcquireTTL, script: "split-acquire.txt", Expect: alwaysPass, opTimeout: splitAcquireOpTimeout,
		Minimum: history.Minimum{Grants: 2, Sections: 1, Accepted: 1, RegrantWithin: int64(run.RegrantWithin(splitAcquireTTL))},
		Effects: []Effect{crashedPaused("c1", "in its acquire")},
	},
	{
		Name:     "retried-release",
		anyShape: true,
		Lesson: "c1's release reaches the server and takes effect, but its answer is lost: c1 only hears that its " +
			"connection broke. It acquires again on the same session, c2 queues behind it, and c1 retries the first " +
			"release. A release must name the grant it ends: a lock whose release deletes its key by name — etcd's " +
			"Mutex.Unlock does, and a session's key name is the same at every Lock — deletes the newer lock, and c2 " +
			"is granted beside c1 (etcd issue 22082, open upstream). A correct lock answers the retry \"not held\".",
		Members: 3, TTL: 3, script: "retried-release.txt", Expect: alwaysPass,
		Minimum: history.Minimum{Grants: 3, Sections: 2, Accepted: 2},
		Effects: []Effect{releaseTookEffectUnanswered("c1"), regrantedBeforeRetry("c1", "c2")},
	},
	{
		Name:     "lost-acquire",
		anyShape: true,
		Lesson: "c2 asks for the free lock over a link that fails one way: its request reaches the server and writes " +
			"its key, but the answer is lost and c2 hears only that its connection broke; c2 gives up. c1's acquire " +
			"is lost the same way, and c1 asks again on the same session. A lock must clean such a key up, or take " +
			"it up when asked again (etcd's Mutex names the key after the session for that; ZooKeeper's recipe " +
			"puts a GUID in its node's name, and looks for it after a broken connection): a key left behind " +
			"under a session that lives on holds the lock, or a place in its queue, for nobody, and every acquire " +
			"after it waits for as long as that session lives — the liveness check catches the wedge. A lock " +
			"whose client rides out the lost answer (it asks again and learns the outcome) is granted all the " +
			"same: the lesson is not its to learn, and the run is skipped.",
		Members: 3, TTL: lostAcquireTTL, script: "lost-acquire.txt", Expect: alwaysPass, opTimeout: lostAcquireOpTimeout,
		Minimum: history.Minimum{Grants: 1, Sections: 1, Accepted: 1, RegrantWithin: int64(run.RegrantWithin(lostAcquireTTL))},
		Effects: []Effect{acquireTookEffectUnanswered("c2"), acquireTookEffectUnanswered("c1")},
	},
	{
		Name: "lost-request",
		Lesson: "c1 holds the lock; c2 asks, and its node — its place in the queue — is made and the answer heard. " +
			"Then c2's connection breaks under the request it sent next (to read the queue): that request is never " +
			"answered, and the client reconnects within its session. A lock that gives up with an error must " +
			"delete its node first; one that rides the break out (it asks again and waits on) cleans up when its " +
			"deadline passes. go-zookeeper's Lock returns the connection's error and leaves its node: under a " +
			"session that lives on, it holds the lock for nobody, and c1, asking again after its release, waits " +
			"behind it for as long as that session lives — the liveness check catches the wedge. The request is " +
			"held off the wire from the one after the write, so the break comes at the same step on every run.",
		Members: 3, TTL: lostAcquireTTL, script: "lost-request.txt", Expect: alwaysPass, opTimeout: lostAcquireOpTimeout,
		Minimum: history.Minimum{Grants: 2, Sections: 2, Accepted: 2, RegrantWithin: int64(run.RegrantWithin(lostAcquireTTL))},
		Effects: []Effect{requestLost("c2")},
	},
	{
		Name: "leader-killed",
		Lesson: "c1 holds the lock and c2 waits for it when the leader of the ensemble dies. The other servers " +
			"elect a new one; meanwhile every server drops its clients (a follower without its leader serves nobody) " +
			"and every client moves to a server that serves it again, within its session. ZooKeeper commits a write " +
			"on a quorum before it answers, so the new leader has every node the old one had: c1 still holds, works " +
			"and releases, and c2 — whose node and watch lived through the election — is granted. The lab waits until " +
			"another server leads and every client has been answered since, so that no step meets the connection the " +
			"leader's death broke; a session of a few seconds outlives the election on a busy machine.",
		Members: 3, TTL: leaderKilledTTL, MemberFaults: true, script: "leader-killed.txt", Expect: alwaysPass,
		opTimeout: leaderKilledOpTimeout,
		Minimum:   history.Minimum{Grants: 2, Sections: 2, Accepted: 2},
		Effects:   []Effect{grantedDuring("c2", faults.KillLeader, "", "the old leader was dead")},
	},
	{
		Name: "server-isolated",
		Lesson: "c1 holds the lock and c2 waits for it on another server when c1's server is cut off from the other " +
			"two. A ZooKeeper server that loses the quorum stops serving and drops its clients, and they move to a " +
			"server that serves, within their session: c1 keeps its session, its node and so the lock, works and " +
			"releases, and c2 is granted. etcd's client on a member cut off loses its lease instead (isolated-asks). " +
			"The lab waits until the cut-off server serves nobody, another leads, and both clients have been " +
			"answered again; its sessions are long enough to outlive the server's noticing and the clients' move.",
		Members: 3, TTL: serverIsolatedTTL, MemberFaults: true, script: "server-isolated.txt", Expect: alwaysPass,
		opTimeout: leaderKilledOpTimeout,
		Minimum:   history.Minimum{Grants: 2, Sections: 2, Accepted: 2},
		Effects:   []Effect{grantedDuring("c2", faults.IsolateMember, "m1", "m1 was cut off")},
	},
	{
		Name:    "link-blip",
		seconds: 15,
		Lesson: "c1's link fails one way for 1.2 s — well under its lease's 3 s TTL — from its next keep-alive, while " +
			"it holds the lock and works for three TTLs: the keep-alive renews the lease on the server, its answer comes " +
			"late. Later its link fails both ways for 1.2 s while it waits in the queue. The lease was alive when " +
			"the link came back, so a correct lock goes on renewing it and rides through: c1 keeps the lock, and " +
			"later its place in the queue. A lock that takes one unanswered renewal for a lost lock and stops " +
			"renewing lets its lease lapse a TTL later, and the next client is granted while c1 still works — on " +
			"every run, whatever the lock's rhythm, as the blip begins with a renewal. The lease-kept check does " +
			"not excuse such a lapse: held answers cannot starve a lease, and the keep-alives c1 sent (or did not) " +
			"after them are in the history.",
		Members: 3, TTL: 3, script: "link-blip.txt", Expect: alwaysPass, opTimeout: blipOpTimeout,
		Minimum: history.Minimum{Grants: 3, Sections: 3, Accepted: 3},
		Effects: []Effect{blippedHolding("c1", 3*time.Second, faults.HoldAnswers), blippedWaiting("c1", 3*time.Second)},
	},
	{
		Name:    "slow-link",
		seconds: 13,
		Lesson: "c1's link turns slow — every message delayed 400 ms each way, about a seventh of its lease's 3 s TTL — " +
			"just after it is granted the lock; it works for 4 s, past its TTL, then waits in the queue and is granted over " +
			"the slow link. Keep-alives reach the server late and their answers later still, but a lock that sends " +
			"each one in time by the clock of its requests keeps its lease. One that renews a TTL after the last " +
			"answer loses a round trip at every renewal: its lease ends under c1, and the next client is granted " +
			"while c1 still works. The lease-kept check adds the link's delay to every keep-alive sent over it, " +
			"and blames the lock only for one that arrived after the lease had ended.",
		Members: 3, TTL: 3, script: "slow-link.txt", Expect: alwaysPass, opTimeout: slowLinkOpTimeout,
		needs:   []script.Capability{script.KeepAlives},
		Minimum: history.Minimum{Grants: 3, Sections: 3, Accepted: 3},
		Effects: []Effect{slowHolding("c1", 3*time.Second), slowGranted("c1")},
	},
	{
		Name:    "isolated-asks",
		seconds: 7,
		Lesson: "c1 holds the lock when its member, m1, is cut off from the other two; c1 still reaches m1. The " +
			"majority ends c1's lease and grants the lock to c2, while m1 keeps the state it had. c1 asks again " +
			"through m1, with the Locker it has (on the cut-off side nothing tells it the lease ended): a correct " +
			"lock cannot grant it, since a new lease needs the quorum. A lock that decides " +
			"from what m1 can answer alone — a serializable read that still shows c1's key — tells c1 it holds " +
			"the lock beside c2. After the heal c1 is granted again.",
		Members: 3, TTL: 1, MemberFaults: true, script: "isolated-asks.txt", Expect: alwaysPass,
		needs:   []script.Capability{script.PinnedClients},
		Minimum: history.Minimum{Grants: 3, Sections: 2, Accepted: 2},
		Effects: []Effect{
			cutOffLeasesEnded(faults.IsolateMember, "isolated"),
			othersGranted(faults.IsolateMember, "isolated", false),
			askedCutOff("c1"),
		},
	},
	{
		Name: "expire-while-waiting-lapse",
		Lesson: "The same lesson as expire-while-waiting, with the waiter's lease ending the way it does in " +
			"production: c2's link fails while it waits in the queue, and the server lets its lease lapse. c1 " +
			"releases; the link heals. c2 must be told its session expired — a grant now would rest on a lease the " +
			"server ended before anyone released the lock to c2. On ZooKeeper the lease is the session, ended by the " +
			"ensemble once its timeout passes unheard; a lock that gives its waiter up as soon as the link breaks " +
			"has nothing granted on the ended session, and is skipped.",
		Members: 3, TTL: 1, script: "expire-while-waiting-lapse.txt", Expect: alwaysPass, opTimeout: lapseOpTimeout,
		Minimum: history.Minimum{Grants: 1, Sections: 1, Accepted: 1},
		Effects: []Effect{queuedThenExpired("c2"), releasedWhileWaiting("c1", "c2")},
	},
	{
		Name:     "holder-told",
		anyShape: true,
		Lesson: "c1 holds the lock when its link is cut, and the server ends its lease a TTL later. The lock must tell " +
			"c1 — close its grant's Lost — within two seconds of that, though it cannot reach the server: Lost is how " +
			"a holder learns that it must stop working under the lock, and a lock that never closes it lets its " +
			"holder work on, believing it holds, while the next client is granted. etcd's client gives up on a lease " +
			"a TTL after its last keep-alive answer. On ZooKeeper the lease is the session, and a client cut off " +
			"from the ensemble hears of its expiry only once it reconnects: a lock must count the session timeout " +
			"from the disconnect itself (Curator does), not wait for that word (the known-bad zk-deaf). A lock " +
			"whose grants carry no Lost says so, and is not judged (the told-lost check).",
		Members: 3, TTL: 1, script: "holder-told.txt", Expect: alwaysPass,
		Minimum: history.Minimum{Grants: 2, Sections: 1, Accepted: 1},
		Effects: []Effect{leaseEndedDuring("c1", faults.CutClient, "c1's link was cut")},
	},
	{
		Name:     "gave-up",
		anyShape: true,
		Lesson: "c1 holds the lock; c2 asks for it and waits until its context's deadline passes. Acquire must then " +
			"return the context's error, and leave nothing behind: c3, which asks next, is granted when c1 releases. " +
			"A caller whose deadline passed has moved on — it reports a time-out, retries, serves another request — " +
			"so a lock that goes on waiting for it grants the lock to nobody, and c3 waits behind a holder that does " +
			"not know it holds. The deadline check FAILs a grant returned more than a second after the deadline, and " +
			"an acquire still unanswered ten seconds after it, when the lab stops waiting for it.",
		Members: 3, TTL: 1, script: "gave-up.txt", Expect: alwaysPass,
		Minimum: history.Minimum{Grants: 3, Sections: 3, Accepted: 3},
		Effects: []Effect{gaveUp("c2", "c1")},
	},
	{
		Name:     "crashed-holder",
		anyShape: true,
		Lesson: "c1 holds the lock when its process is killed (SIGKILL, an OOM kill, a crash) and started again. A dead " +
			"process releases nothing and revokes nothing: its lock key and lease stay on the server, and c2, waiting " +
			"behind it, is granted the lock only when the lease runs out, one TTL later — the price of a crash, and " +
			"why a lock needs a lease at all (without one it would never be freed). The restarted c1 holds nothing and " +
			"must acquire afresh. For a lock run as a process, the crash is a real SIGKILL of its process group; for a " +
			"Go lock, the client's connection is closed under it and the lock is left, never released.",
		Members: 3, TTL: 1, script: "crashed-holder.txt", Expect: alwaysPass, opTimeout: crashOpTimeout,
		Minimum: history.Minimum{Grants: 3, Sections: 3, Accepted: 3},
		Effects: []Effect{crashedHolding("c1"), waitedOutLease("c2", "c1")},
	},
	{
		Name: "failover",
		Lesson: "A primary that replicates asynchronously — Redis, PostgreSQL's streaming replication as it ships — " +
			"acknowledges a write before its replica has it. c1 is granted the lock while replication lags; the primary " +
			"dies and a replica is promoted (Sentinel, Patroni) that never had c1's lock: a Redis replica lacks its key, " +
			"and a PostgreSQL replica has no advisory lock at all, for they are never replicated. c2 asks the new " +
			"primary and is granted the same lock while c1 still works under it. The token c1's grant took (an INCR, a " +
			"sequence's nextval) went with the old primary too, so c2's token is c1's: a fenced store cannot tell their " +
			"writes apart and an update is lost; a write guarded in the store itself is refused, but two clients held " +
			"the lock with one token all the same. A lock on one primary is only as safe as its replication (Redis's " +
			"WAIT does not make it synchronous either); this is the case Redlock was written for, and fencing with a " +
			"token from the store itself needs a store that keeps it.",
		Members: 3, TTL: 1, MemberFaults: true, script: "failover.txt", Expect: alwaysFail,
		// c1's late write is refused on a guarded resource, as it should be:
		// c2's critical section is the progress the lesson needs.
		Minimum: history.Minimum{Grants: 2, Sections: 1, Accepted: 1},
		Effects: []Effect{grantedDuring("c2", faults.KillMember, "m1", "the primary m1 was dead")},
	},
	{
		Name: "redlock-paused",
		Lesson: "Redlock asks five independent Redis masters and holds the lock while a majority keep its key. c1 is " +
			"granted, reads the counter and freezes before its write for longer than the key lives; the keys expire " +
			"on every master and c2 is granted, reads and writes. c1 wakes and writes what it read: an update is lost. " +
			"Redlock's majority and its clock-drift allowance say nothing about a paused client, and it hands out no " +
			"fencing token a store could check (Kleppmann's critique): the store cannot fence what it is not given, so " +
			"Redlock is run on the unfenced store only.",
		Members: 5, TTL: 1, script: "redlock-paused.txt", Expect: unfencedFails,
		needs:   []script.Capability{script.Masters},
		Minimum: history.Minimum{Grants: 2, Sections: 2, Accepted: 2},
		Effects: []Effect{
			leaseEndedDuring("c1", faults.PauseClient, "c1 was paused"),
			grantedDuring("c2", faults.PauseClient, "c1", "c1 was paused"),
		},
	},
	{
		Name:    "leader-failover",
		seconds: 4,
		Lesson: "Three clients contend while the etcd leader is killed. A new leader is elected in about an election " +
			"timeout; clients of the dead member stall and lose their leases; the others go on. etcd's linearizable " +
			"writes keep every fenced or guarded resource safe." + holderCutOff,
		Members: 3, TTL: 1, MemberFaults: true, Expect: unfencedAny,
		exec:    contendUnder(3, faults.KillLeader, cutOffPhases),
		needs:   []script.Capability{script.KillLeader, script.PinnedClients},
		Minimum: memberFaultMinimum,
		Effects: []Effect{
			othersGranted(faults.KillLeader, "down", true),
			cutOffLeasesEnded(faults.KillLeader, "down"),
			rejoined(faults.KillLeader),
		},
	},
	{
		Name: "minority-partition",
		Lesson: "The members split one against two while clients on all of them contend. The isolated member cannot " +
			"serve linearizable requests, so its client's lease lapses and the majority side carries on; after the heal " +
			"everyone rejoins. A quorum system partitioned this way stays safe." + holderCutOff,
		Members: 3, TTL: 1, MemberFaults: true, Expect: unfencedAny,
		exec:    contendUnder(3, faults.IsolateMember, cutOffPhases),
		needs:   []script.Capability{script.IsolateMember, script.PinnedClients},
		Minimum: memberFaultMinimum,
		Effects: []Effect{
			cutOffLeasesEnded(faults.IsolateMember, "isolated"),
			othersGranted(faults.IsolateMember, "isolated", false),
			rejoined(faults.IsolateMember),
		},
	},
	{
		Name:    "member-restart",
		seconds: 8,
		Lesson: "A member is killed mid-run and restarted on its own data directory. It comes back with every key it " +
			"had and catches up; its clients reconnect." + holderCutOff,
		Members: 3, TTL: 1, MemberFaults: true, Expect: unfencedAny,
		exec:    contendUnder(3, faults.KillMember, memberFaultPhases),
		needs:   []script.Capability{script.KillMember, script.PinnedClients},
		Minimum: memberFaultMinimum,
		Effects: []Effect{othersGranted(faults.KillMember, "down", false), rejoined(faults.KillMember)},
	},
	{
		Name:     "contention",
		anyShape: true,
		Lesson: "Five clients contend for the lock with no fault at all: the baseline. Every increment must be kept and " +
			"every token must grow; the run also shows how fast each lock hands over.",
		Members: 3, TTL: 1, Expect: alwaysPass,
		exec: func(ctx context.Context, t script.Target, p Plan) error { return run.ContendOn(ctx, t, 5, 50) },
		// Every cycle releases, so the releases that returned ok are as
		// many as the grants; and a lock that grants only one of five
		// contending clients has not been tested as a lock. (At least two,
		// not all five: a polling lock is not fair, and 20 seeds of
		// ttl-poll and single-key-watch served their least-served client
		// once in 55 grants.)
		Minimum: history.Minimum{Grants: 50, Sections: 50, Accepted: 50, Releases: 50, Clients: 2},
		Effects: []Effect{contended()},
	},
	{
		Name:     "slow-holder",
		anyShape: true,
		seconds:  5,
		Lesson: "No fault at all: three clients contend, and each works inside its critical section for a time drawn " +
			"from the seed around the lease TTL — one of them for two and a half TTLs (Jepsen's lock workload works " +
			"0–2 s under a 2 s TTL). A real client keeps its lease alive while it works (etcd's session renews it " +
			"every TTL/3), so a slow holder is still the only holder. A lock that sets its lease once and never " +
			"renews it (Redis' SET NX PX) loses the lock in the middle of the long section: the next client is " +
			"granted while the first still works, only a fence keeps the resource safe, and the lock is broken " +
			"whatever the resource does — the lease-kept check says so on every resource.",
		Members: 3, TTL: 1, Expect: alwaysPass, opTimeout: slowOpTimeout,
		exec: func(ctx context.Context, t script.Target, p Plan) error { return run.SlowHoldersOn(ctx, t, p.work()) },
		draw: func(s Scenario, seed uint64, p *Plan) {
			p.Work = slowWork(seed, time.Duration(s.TTL)*time.Second)
		},
		Minimum: history.Minimum{Grants: 3, Sections: 3, Accepted: 2},
		Effects: []Effect{heldPastTTL(time.Second)},
	},
	{
		Name: "random",
		Lesson: "A script drawn from the seed: three clients acquire, work, release and queue, while holders are paused " +
			"before their write or their release, cut off until their lease lapses, or have their lease revoked, and " +
			"waiters lose theirs. Every step waits for what it needs, so a seed's script runs the same way every time " +
			"(schedule.json lists it). When a paused holder's late write lands after the next holder's, an unfenced " +
			"resource loses an update — whether a seed's script does that is its draw, so unfenced is reported, not " +
			"gated; fenced and guarded resources must stay correct, and the lock must grant again once every fault " +
			"has healed.",
		Members: 3, TTL: 1, opTimeout: drawnOpTimeout,
		Expect: unfencedAny,
		exec:   func(ctx context.Context, e script.Target, p Plan) error { return script.RunDrawn(ctx, e, p.Steps) },
		needs:  []script.Capability{script.Revoke},
		draw: func(s Scenario, seed uint64, p *Plan) {
			// The kinds drawn before crashes could be: every seed's
			// script stays the one it was.
			kinds := []string{script.WalkPause, script.WalkCut, script.WalkExpire}
			p.Steps = script.DrawScript(seed, script.WalkOptions{Clients: 3, Members: s.Members, TTL: s.TTL, Faults: kinds}, randomActions)
		},
		Minimum: history.Minimum{Grants: 2, Sections: 1, Accepted: 1},
		Effects: []Effect{allFaultsApplied()},
	},
}

// memberFaultPhases shape the member-fault scenarios: 4 critical sections
// before the fault, 8 (or a stall) during it, 12 after it is undone;
// cutOffPhases, besides, hold the fault until the cut-off member's clients
// have lost their leases.
var (
	memberFaultPhases = run.Phases{Before: 4, During: 8, After: 12}
	cutOffPhases      = run.Phases{Before: 4, During: 8, After: 12, UntilLeasesGone: true}
)

// memberFaultMinimum: the sections before the fault and after it, and a
// grant soon after the heal. Each client that was cut off may finish one
// section whose write is refused, so three fewer must be accepted.
var memberFaultMinimum = history.Minimum{Grants: 16, Sections: 16, Accepted: 13, RegrantWithin: regrantWithin}

// Lookup finds a scenario by name.
func Lookup(name string) (Scenario, error) {
	for _, s := range catalog {
		if s.Name == name {
			return s, nil
		}
	}
	return Scenario{}, fmt.Errorf("unknown scenario %q (scenarios: %s)", name, strings.Join(Names(), ", "))
}

// Names lists the scenarios in catalog order.
func Names() []string {
	names := make([]string, len(catalog))
	for i, s := range catalog {
		names[i] = s.Name
	}
	return names
}
