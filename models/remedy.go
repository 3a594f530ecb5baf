package models

import (
	"maps"
	"slices"
)

// Remedy says, for a check a lock failed, which clause of the lock contract
// (lock.Locker, lock.Grant) the failure points to and what a lock does to
// keep it: what to change, where the check's explanation says what
// happened. "" for a check that judges the run rather than the lock
// (environment) or that is a finding, not a failure (mutex).
func Remedy(check string) string {
	return remedies[check]
}

// remedies are the contract's clauses by the check that enforces them.
var remedies = map[string]string{
	"tokens": "Grant.Token must be the create revision of Grant.Key, larger for every later grant " +
		"(or, with Key left empty, a number the store orders that grows with every grant); " +
		"a constant, reused or client-made token lets a fenced store accept a stale holder's write.",
	"stale-writes": "a holder's write carried a token below one the resource had already seen: hand out " +
		"tokens that grow with every grant (Grant.Token), and never grant while an earlier grant's lease is alive.",
	"counter": "two critical sections overlapped on the resource: the lock granted while an earlier holder could " +
		"still write. On a fenced or etcd-guarded resource that means the grant's Token or Key did not fence " +
		"(see the tokens and validity checks).",
	"validity": "a grant must rest on a lease the server keeps while it is held, and Release must delete only " +
		"the key of the grant it is given, guarded by that grant's create revision (etcdlock.Guard): a retried " +
		"Release must not free the session's newer lock (etcd issue 22082), nor one that is not the session's.",
	"expired-waiter": "an Acquire whose lease ended while it waited must return lock.ErrSessionExpired, never a " +
		"grant: after waiting, read the session's own key again and fail if it is gone (etcd's Mutex does since " +
		"v3.5; etcd issue 11456).",
	"lease-kept": "keep the grant's lease alive while it is held: renew it every TTL/3 (on etcd keep-alives, " +
		"as concurrency.Session sends them; on Redis extend the key's expiry if it still holds the grant's value, " +
		"as Redisson's watchdog does) and retry a failed renewal rather than give up; when the lease ends " +
		"anyway, close Grant.Lost.",
	"liveness": "after the faults heal the lock must grant again. An Acquire that returns an error must remove " +
		"the key its session put — also when the put committed and its answer was lost, or ctx ended while it " +
		"queued: delete it guarded by the session's lease and by a revision after the latest grant (etcd's " +
		"Mutex as shipped does not; docs/gate.md shows the fix). A retried Acquire takes up its " +
		"own key rather than wait behind it, and a waiter must not miss the release it waits for.",
	"hand-off": "a waiter must be granted once the lock is free: wait by a watch on what frees the lock, from the " +
		"revision you read it at (so a release in between is not missed), or poll more often than the lease's TTL; " +
		"and an Acquire that gives up must remove the key its session put, so that nobody waits behind it.",
	"release": "Release must free the grant it names before it answers: unlock on the very session that holds the " +
		"lock (a connection handed back to a pool, and the next one taken from it, are other sessions), and take an " +
		"unlock that frees nothing (pg_advisory_unlock's false) for lock.ErrNotHeld, not success.",
	"progress": "the lock did too little to be judged: Acquire must grant a free lock, Release must free it, " +
		"and a grant must carry what the resources need (Token for a fenced store; Key and Token for an " +
		"etcd-guarded write).",
}

// Remedied lists, in order, the checks that have a Remedy.
func Remedied() []string { return slices.Sorted(maps.Keys(remedies)) }
