package etcdlock

import "github.com/locklab/locklab/lock"

// stories are what locklab explain tells of a lock beyond its line
// (Lock.Story), by name.
var stories = map[string]string{
	"etcd-mutex": "etcd's concurrency.Mutex, exactly as it ships: each client puts a key named after its session's " +
		"lease under the lock's prefix, the oldest key holds the lock, and every other client waits for the key " +
		"before its own to go. It keeps mutual exclusion under pauses as well as any lease can: fence what the " +
		"holder writes.\n\n" +
		"Two things it does not do that a lock used under faults needs. Lock removes its key when its wait fails, " +
		"but not when its first request committed and the answer was lost: a client that gives up then leaves " +
		"the lock to a key nobody holds, until its session ends (lost-acquire). Unlock deletes the session's key " +
		"by name, the same at every Lock, so an Unlock retried after an ambiguous failure frees the session's " +
		"newer lock (retried-release; etcd issue 22082). etcd-mutex-retry-safe is the Mutex with both added, as " +
		"docs/gate.md shows a user doing it.",
	"etcd-election": "Leader election is a lock under another name. etcd's concurrency.Election keeps the same " +
		"queue as its Mutex: each candidate puts a key named after its session's lease under the election's " +
		"prefix, the oldest key leads, and every other candidate waits for the keys before its own to be deleted. " +
		"In the lab, Campaign is the acquire, Resign the release, and the leader key's create revision the " +
		"fencing token (a leader's term number: every later leader's is larger).\n\n" +
		"The two-leaders lesson (paused-holder, isolated-holder): the leader is frozen — a GC pause, SIGSTOP, a " +
		"cut link — for longer than its lease. The server ends the lease, deletes the leader key, and the next " +
		"candidate is elected, rightly. The old leader wakes and goes on leading: nothing tells a frozen process " +
		"that time passed. For a while there are two leaders, and whatever both write without a fence, one of " +
		"them overwrites. Election does not prevent it and cannot: fence what a leader writes with its term " +
		"(the fenced store refuses the old term once it has seen the new one), or make each write conditional " +
		"on the leader key still having the leader's revision (the etcd-guarded store; Election's Proclaim " +
		"does exactly this comparison).\n\n" +
		"The phantom-leader lesson (expire-while-waiting): Campaign returns \"you lead\" as soon as the keys " +
		"before the candidate's own are gone — without looking at its own key. A candidate whose lease ended " +
		"while it waited lost its key with it, yet is told it leads, and no other candidate is stopped by a key " +
		"that is not there. etcd's Mutex has checked its own key after waiting since v3.5 (etcd issue 11456); " +
		"Election does not: etcd-election, the Election as it ships, FAILs the expire-while-waiting lessons, as " +
		"documented. The lab's etcd-election-retry-safe reads the leader key once more after Campaign and " +
		"refuses a grant whose key is gone; campaign-unchecked, a known-bad lock, is that adapter without the " +
		"read.\n\n" +
		"See it: locklab run --lock etcd-election,etcd-election-retry-safe --scenario paused-holder,expire-while-waiting",
}

func init() { lock.Tell(locks, stories) }
