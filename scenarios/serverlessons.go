package scenarios

import (
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/script"
)

// serverLessons are the catalog's lessons of a store's servers themselves:
// a server restarted at once, on what it kept, and wall clocks that jump.
// Which stores they run on follows from how a store keeps its data and
// times its leases (script.Durable, Volatile, WallClockLeases,
// MonotonicLeases).
var serverLessons = []Scenario{
	{
		Name: "server-restart",
		Lesson: "The store's server crashes and a supervisor starts it again at once, on its data, while c1 holds " +
			"the lock and works. A store that keeps what it acknowledged (PostgreSQL: committed rows, sequences) " +
			"loses its sessions all the same, and an advisory lock lives in its session: c2 is granted the lock " +
			"on the restarted server while c1 still works, and unfenced an update is lost. The sequence c1's token " +
			"came from is kept, so c2's token is larger: the fenced store refuses c1's write, and pg-guarded finds " +
			"c1's session gone. Its twin on a store that restarts with nothing is restart-empty.",
		Members: 3, TTL: 1, MemberFaults: true, script: "server-restart.txt", Expect: unfencedFails,
		needs:   []script.Capability{script.Durable},
		Minimum: history.Minimum{Grants: 2, Sections: 1, Accepted: 1},
		Effects: []Effect{
			leaseEndedDuring("c1", faults.PauseClient, "c1 was held in its critical section"),
			grantedDuring("c2", faults.PauseClient, "c1", "c1 was still in its critical section"),
		},
	},
	{
		Name: "restart-empty",
		Lesson: "The store's server crashes and a supervisor starts it again at once, while c1 holds the lock and " +
			"works — and it keeps nothing: Redis run without RDB or AOF, as a cache is (Redlock's 'delayed " +
			"restart' is the remedy its author gives). c1's key is gone, and so is the counter its token came " +
			"from: c2 is granted the lock with c1's token. Unfenced and fenced alike an update is lost, for a " +
			"fenced store cannot tell their tokens apart; a write guarded by c1's key finds it gone, but two " +
			"clients held the lock with one token all the same. Its twin on a store that keeps what it " +
			"acknowledged is server-restart.",
		Members: 3, TTL: 1, MemberFaults: true, script: "restart-empty.txt", Expect: alwaysFail,
		needs:   []script.Capability{script.Volatile},
		Minimum: history.Minimum{Grants: 2, Sections: 2, Accepted: 1},
		Effects: []Effect{grantedDuring("c2", faults.PauseClient, "c1", "c1 was still in its critical section")},
	},
	{
		Name: "clock-jump",
		Lesson: "A server's wall clock jumps a minute forward (an NTP step, a virtual machine restored on another " +
			"host) while c1 holds the lock and works, well within its TTL. A store that expires a lease by its " +
			"wall clock — Redis expires a key so — ends c1's lease at once, and c2 is granted the lock while c1 " +
			"still works: unfenced, an update is lost. The fenced store refuses c1's older token and a write " +
			"guarded by c1's key finds it gone. etcd and ZooKeeper time their leases and sessions on the monotonic " +
			"clock, which no wall-clock step moves (the lab cannot move their clocks: see docs/lessons-by-store.md).",
		Members: 3, TTL: 1, MemberFaults: true, script: "clock-jump.txt", Expect: unfencedFails,
		needs:   []script.Capability{script.WallClockLeases},
		Minimum: history.Minimum{Grants: 2, Sections: 2, Accepted: 1},
		Effects: []Effect{
			leaseEndedOn("c1", faults.JumpClock, "m1", "m1's clock had jumped"),
			grantedDuring("c2", faults.PauseClient, "c1", "c1 was still in its critical section"),
		},
	},
	{
		Name: "redlock-clock",
		Lesson: "Redlock's safety rests on every master's clock keeping time (Kleppmann's critique). c1 holds the " +
			"lock on five independent masters and works, well within its validity, when the wall clocks of three " +
			"of them — a majority — jump a minute forward: by their clocks c1's keys are long expired, and they go. " +
			"c2 sets its key on those three and is granted the lock while c1 still holds it by its own reckoning: " +
			"an update is lost. Kleppmann's version needs one clock and a partition (c1 reached A, B, C; C's clock " +
			"jumps; c2 reaches C, D, E); the lab moves three clocks for the same majority. Redlock hands out no " +
			"fencing token, so it runs on the unfenced store only.",
		Members: 5, TTL: 1, MemberFaults: true, script: "redlock-clock.txt", Expect: unfencedFails,
		needs:   []script.Capability{script.Masters, script.WallClockLeases},
		Minimum: history.Minimum{Grants: 2, Sections: 2, Accepted: 1},
		Effects: []Effect{
			leaseEndedOn("c1", faults.JumpClock, "m1", "the masters' clocks had jumped"),
			grantedDuring("c2", faults.PauseClient, "c1", "c1 was still in its critical section"),
		},
	},
	{
		Name: "redlock-restart",
		Lesson: "Redlock's majority is only as good as what each master remembers. c1 reaches three of five " +
			"independent masters (its links to the other two are cut) and holds the lock on them. One of the three " +
			"crashes and is started again at once, empty — Redis run without RDB or AOF, as caches are: c1's keys " +
			"stand on two masters, a minority, long before they expire. c2 sets its key on the restarted master " +
			"and the two c1 never reached, a majority, and is granted while c1 still works: an update is lost. " +
			"Redlock asks a crashed master to stay down for a TTL before it serves again (or to fsync every write); " +
			"a supervisor that restarts it at once, as the lab does here, breaks the majority's promise. Redlock " +
			"hands out no fencing token, so it runs on the unfenced store only.",
		Members: 5, TTL: 5, MemberFaults: true, script: "redlock-restart.txt", Expect: unfencedFails,
		needs:   []script.Capability{script.Masters, script.Volatile},
		Minimum: history.Minimum{Grants: 2, Sections: 2, Accepted: 1},
		Effects: []Effect{grantedDuring("c2", faults.PauseClient, "c1", "c1 was still in its critical section")},
	},
	{
		Name: "redlock-minority",
		Lesson: "Redlock's claim: a lock stands while a majority of its masters hold its key, whatever the rest " +
			"can reach. c1 cannot reach two of five independent masters (its links to m4 and m5 are cut); it sets " +
			"its key on the other three, a majority, and holds the lock. c2 asks meanwhile and can set its key on " +
			"m4 and m5 only, two of five: a Redlock that counts a majority (N/2+1) gives those keys back and asks " +
			"again until c1 releases; one that counts half (N/2, two of five) grants c2 beside c1. Two majorities " +
			"of one set of masters always share one; two halves need not. The twin of minority-partition on " +
			"independent masters; Redlock hands out no fencing token, so it runs on the unfenced store only.",
		Members: 5, TTL: 5, script: "redlock-minority.txt", Expect: alwaysPass, opTimeout: minorityOpTimeout,
		needs:   []script.Capability{script.Masters, script.CutLink},
		Minimum: history.Minimum{Grants: 2, Sections: 2, Accepted: 2},
		Effects: []Effect{allFaultsApplied()},
	},
	{
		Name: "clock-jump-held",
		Lesson: "The twin of clock-jump on a store that times its leases on a monotonic clock. Every server's wall " +
			"clock jumps a minute forward while c1 holds the lock and c2 waits, and later two minutes back. " +
			"ZooKeeper stamps a node's times by the wall clock, but times a session by System.nanoTime: c1's " +
			"session, its node and the lock live through both jumps while c1 works for three timeouts, and c2 " +
			"is granted only when c1 releases. A store whose leases run on the wall clock (Redis) ends c1's " +
			"lease at the first jump (clock-jump).",
		Members: 3, TTL: 1, MemberFaults: true, script: "clock-jump-held.txt", Expect: alwaysPass,
		opTimeout: clockHeldOpTimeout,
		needs:     []script.Capability{script.MonotonicLeases},
		Minimum:   history.Minimum{Grants: 2, Sections: 2, Accepted: 2},
		Effects:   []Effect{heldPastTTL(time.Second), releasedWhileWaiting("c1", "c2")},
	},
	{
		Name: "clock-drift-held",
		Lesson: "The twin of redlock-drift on a store that times its leases on a monotonic clock. Every server's " +
			"wall clock runs twice as fast as the machine's while c1 holds the lock and c2 waits; c1 works for " +
			"three session timeouts, six by the servers' clocks. ZooKeeper times a session by System.nanoTime, " +
			"which no wall clock moves: c1's session, its node and the lock live on, and c2 is granted only when " +
			"c1 releases. On Redlock's masters a clock that runs fast expires a key early, and c2 is granted " +
			"beside c1 (redlock-drift).",
		Members: 3, TTL: 1, MemberFaults: true, script: "clock-drift-held.txt", Expect: alwaysPass,
		opTimeout: clockHeldOpTimeout,
		needs:     []script.Capability{script.MonotonicLeases},
		Minimum:   history.Minimum{Grants: 2, Sections: 2, Accepted: 2},
		Effects:   []Effect{heldPastTTL(time.Second), releasedWhileWaiting("c1", "c2")},
	},
	{
		Name: "redlock-drift",
		Lesson: "Redlock's safety rests on every master's clock running at the rate of the client's, give or take " +
			"its drift allowance (a hundredth of the TTL, in the Redlock article and redsync alike). The wall " +
			"clocks of three of five masters — a majority — run twice as fast as the machine's; c1 is granted the " +
			"lock and works, well within the validity Redlock gave it, while on those three its keys live half " +
			"their TTL and go. c2 sets its key on them and is granted the lock while c1 still holds it by its own " +
			"count: an update is lost. The twin of redlock-clock with a clock that runs fast rather than one that " +
			"jumps; Redlock hands out no fencing token, so it runs on the unfenced store only.",
		Members: 5, TTL: 1, MemberFaults: true, script: "redlock-drift.txt", Expect: unfencedFails,
		needs:   []script.Capability{script.Masters, script.WallClockLeases},
		Minimum: history.Minimum{Grants: 2, Sections: 2, Accepted: 1},
		Effects: []Effect{
			leaseEndedOn("c1", faults.DriftClock, "m1", "the masters' clocks ran fast"),
			grantedDuring("c2", faults.PauseClient, "c1", "c1 was still in its critical section"),
		},
	},
	{
		Name:     "client-clock-back",
		anyShape: true,
		Lesson: "holder-told with the holder's own clock set back. c1 holds the lock when the wall clock of its own " +
			"machine is set back a minute (an NTP step, a clock corrected by hand) and its link is cut; the server " +
			"ends its lease a TTL later. The lock must still tell c1 within two seconds: a lock that counts its lease " +
			"on a monotonic clock does, one that counts it on the wall clock counts a minute more, and its holder " +
			"works on, told nothing, while the next client is granted (the known-bad redis-wall-deadline). The lab " +
			"moves the clock of a lock run as a program, by a small library preloaded into it; a Go lock reads the " +
			"lab's own clock, and a lock whose grants carry no Lost tells nothing: both are skipped, saying so.",
		// Three-second leases: a lock run as a program that renews nothing
		// (deadline-lock.sh starts a redis-cli per command) holds c2's grant
		// through its critical section and release on a busy machine too.
		Members: 3, TTL: 3, script: "client-clock-back.txt", Expect: alwaysPass,
		Minimum: history.Minimum{Grants: 2, Sections: 1, Accepted: 1},
		Effects: []Effect{leaseEndedDuring("c1", faults.CutClient, "c1's link was cut")},
	},
	{
		Name:     "client-clock-slow",
		anyShape: true,
		Lesson: "client-clock-back with the holder's own clock running slow rather than set back: c1's wall clock " +
			"runs at a fifth of the machine's rate while it holds the lock, cut off, and the server ends its lease a " +
			"TTL later. The lock must still tell c1 within two seconds: one that counts its lease on a monotonic " +
			"clock does; one that counts it on the wall clock — as Redlock's client counts its validity, TTL less " +
			"the time its acquire took less a drift allowance — counts five TTLs, and its holder works on, told " +
			"nothing, while the next client is granted (the known-bad redis-wall-deadline). Skipped, saying so, for " +
			"a Go lock or a lock whose grants carry no Lost, as client-clock-back is.",
		Members: 3, TTL: 3, script: "client-clock-slow.txt", Expect: alwaysPass,
		Minimum: history.Minimum{Grants: 2, Sections: 1, Accepted: 1},
		Effects: []Effect{leaseEndedDuring("c1", faults.CutClient, "c1's link was cut")},
	},
}
