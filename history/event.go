package history

import (
	"errors"
	"strings"
)

// FormatVersion is the version of the file format this package writes.
// Decode reads it and every older one: version 2 records each
// fault as a typed FaultSpec beside its name; version 1 named it only.
const FormatVersion = 2

// oldestFormat is the oldest file format Decode still reads.
const oldestFormat = 1

// Header is the first line of a history file: what ran.
type Header struct {
	Format   int    `json:"locklab_history"`
	Scenario string `json:"scenario,omitempty"`
	Seed     uint64 `json:"seed"`
	Lock     string `json:"lock,omitempty"`
	Resource string `json:"resource,omitempty"`
	Members  int    `json:"members,omitempty"`
	Version  string `json:"locklab_version,omitempty"`
	// Minimum is the least the run had to achieve to count as a test of the
	// lock at all; models.Check judges it, so an offline check of the file
	// gives the verdict the run gave. Nil: no minimum stated.
	Minimum *Minimum `json:"minimum,omitempty"`
	// Expect is the verdict the configuration is documented to get (PASS,
	// FAIL or ANY; empty in older files: PASS), and Effects what its
	// scenario claims happens in every run: with them an offline check
	// judges the file exactly as the run did.
	Expect  string   `json:"expect,omitempty"`
	Effects []Effect `json:"effects,omitempty"`
}

// Minimum is the progress a scenario must see before its verdict can be a
// PASS: a lock that grants nothing, or whose every guarded write is refused,
// has proved nothing (etcd's robustness tests fail a run below a minimal QPS
// for the same reason).
type Minimum struct {
	// Grants is the least number of acquires that returned ok.
	Grants int `json:"grants,omitempty"`
	// Sections is the least number of critical sections that completed ok.
	Sections int `json:"sections,omitempty"`
	// Accepted is the least number of writes the resource accepted.
	Accepted int `json:"accepted,omitempty"`
	// Releases is the least number of releases that returned ok: a lock
	// whose every release fails hands nothing over.
	Releases int `json:"releases,omitempty"`
	// Clients is the least number of clients granted at least once: where
	// every client contends with no fault, one that never got the lock
	// was starved.
	Clients int `json:"clients,omitempty"`
	// RegrantWithin, if set, bounds liveness: after the last fault of the
	// history ended, an acquire must return ok within this many
	// nanoseconds.
	RegrantWithin int64 `json:"regrant_within_ns,omitempty"`
	// HandOffWithin, if set, bounds how long a waiter may be left waiting
	// while the lock is free — nobody holds it, nobody else is granted, no
	// fault reaches the waiter — before an acquire that is never granted
	// is the lock's failure (the liveness check), in nanoseconds.
	HandOffWithin int64 `json:"hand_off_within_ns,omitempty"`
}

// Type says what an event is.
type Type string

// Event types. An operation is an invoke followed by exactly one of ok, fail
// or info from the same client.
const (
	Invoke Type = "invoke"
	Ok     Type = "ok"   // it happened, with this output
	Fail   Type = "fail" // it definitely did not happen
	Info   Type = "info" // unknown whether it happened (timeout, lost connection)
	// FaultStart and FaultEnd bound a fault's window.
	FaultStart Type = "fault-start"
	FaultEnd   Type = "fault-end"
	// LeaseLost records that a client's lease ended on the server. Its
	// AliveUntil is the last moment the lease was known to be alive (a lower
	// bound), its Time the first moment it was known gone (an upper bound),
	// so a holder's validity is never stretched past what the server
	// granted. Lease names the lease (zero in files that predate it: the
	// loss is then matched by client).
	LeaseLost Type = "lease-lost"
	// Final records the resource's value when the run ended (Value), read
	// by the lab after every client stopped. It lets an offline check count
	// the acknowledged increments the resource lost.
	Final Type = "final"
	// Observed records something the lab saw on the cluster that the
	// operations do not show (What: ObservedConnected with Client and
	// Member, ObservedQueued with Client, ObservedLeader with Member), so
	// that a scenario's claimed effects can be checked from the file alone.
	Observed Type = "observed"
)

// What an observed event saw.
const (
	// ObservedConnected: Client talks to the cluster through Member.
	ObservedConnected = "connected"
	// ObservedQueued: Client's acquire is waiting in the lock's queue (a key
	// of its lease exists under the lock's prefix).
	ObservedQueued = "queued"
	// ObservedLeader: Member is the cluster's leader.
	ObservedLeader = "leader"
	// ObservedReleased: the server shows Client's release took effect (its
	// grant's key is gone) while the client has no answer yet.
	ObservedReleased = "released"
	// ObservedAcquireWritten: the server shows the key Client's acquire
	// wrote (a key of its lease, newer than the acquire) while the client
	// has no answer yet, and never will (faults.LoseAnswer).
	ObservedAcquireWritten = "acquire-written"
	// ObservedGrantGone: the key of Client's grant (Token) was gone from the
	// server while Client held it, had not begun to release it, and its
	// lease was still alive: something else deleted it.
	ObservedGrantGone = "grant-gone"
	// ObservedReleaseKept: Client's release of its grant (Token) answered
	// that it released, and the server still showed the grant held after
	// it: the lock kept for nobody.
	ObservedReleaseKept = "release-kept"
	// ObservedLeaseless: the key of Client's grant (Token) rests on no
	// lease on the server, as the lab read it just after the grant: no
	// expiry, no session owns it. A holder that dies keeps the lock for
	// ever.
	ObservedLeaseless = "leaseless"
	// ObservedStalled: the lab's own process ran nothing from StalledFrom
	// to the event's Time (starved of CPU, a stop-the-world pause): every
	// client — and the embedded cluster — stood still, as in a pause of
	// them all, so a lease that lapsed then says nothing about the lock.
	ObservedStalled = "stalled"
	// ObservedStarved: from StalledFrom to the event's Time the machine's
	// CPUs were oversubscribed — for at least half that time some runnable
	// task waited for a CPU (Linux's CPU pressure) — with the lab's own
	// process, the embedded cluster and every lock's process among those
	// that waited. The run was slowed, not stopped. It excuses no check
	// that caught the lock (a busy runner nearly always is), only the run's
	// pace: a hand-off's wait, and a progress shortfall through most of the
	// run (see package models).
	ObservedStarved = "cpu-starved"
	// ObservedLeaderless: Member, up and answering, was without its
	// leader from StalledFrom to the event's Time: it followed none, or an
	// election came between two looks (its term grew). Without a fault of
	// the schedule that reaches the cluster's members
	// (FaultKind.ReachesMembers) that is the machine's doing — heartbeats
	// held up past an election timeout — and a member without its leader
	// refuses what needs one (a write in flight, a watch made to require
	// one).
	ObservedLeaderless = "leaderless"
	// ObservedCrashed: Client's process was killed (SIGKILL) and started
	// again: what it held or had under way died with it — it believes it
	// holds nothing from then on — while the server keeps its keys until
	// its lease ends.
	ObservedCrashed = "crashed"
	// ObservedToldLost: the Grant.Lost of Client's grant Token closed: the
	// lock told its holder the lease is gone. Token is zero for a lock that
	// gives none: the grant is then Client's latest.
	ObservedToldLost = "told-lost"
	// ObservedUnfollowed: the lab stopped following the Grant.Lost of
	// Client's grant Token before it closed: it replaced Client's Locker
	// (what closing the old one does to Lost is the lab's doing).
	ObservedUnfollowed = "lost-unfollowed"
	// ObservedRequestLost: Client's acquire made its write and was
	// answered; the request it sent next was held off the store and its
	// connections severed, the request unanswered (faults.LoseRequest).
	ObservedRequestLost = "request-lost"
	// ObservedBadToken: Client's grant (Token, Key) broke lock.Grant's
	// contract: Token is not the create revision of Key. KeyRevision is the
	// create revision Key had at revision Token (zero: Key did not exist
	// then); TokenAhead says Token is a revision the server had not reached.
	// The lab cannot watch such a grant's key, and a Guard built from it
	// compares nothing that exists.
	ObservedBadToken = "bad-token"
	// ObservedSaidEnded: Client's lock answered that its session had
	// ended (expired, or its grant not held) while its lease was Lease.
	// AliveUntil, LeaseTTL and Renewals are as in a lease-lost event,
	// KeptAlive too with the grant's answer first, RenewedAt the last
	// keep-alive sent before the answer: a client that heard no answer to
	// the keep-alives it went on sending for a TTL gave its lease up
	// rightly (etcd's client does), whether or not the server still kept
	// it (its lease-lost event, if any, says).
	ObservedSaidEnded = "said-ended"
	// ObservedRunError: the run itself went otherwise than its script — a
	// step did not do what the script says, or the lab failed (Error says
	// how). Written once, last, so that a check of the file judges it as
	// the run did: ERROR, unless a check caught a violation.
	ObservedRunError = "run-error"
)

// Op names an operation.
type Op string

// Operations a workload performs.
const (
	Acquire Op = "acquire" // output: Token
	Release Op = "release" // Token on its completion: the grant it releases
	// CS is one critical section as a single operation: read the protected
	// counter (output Value), then write Value+1 with Token (output
	// Accepted; Reason says why a write was rejected; WriteAt when the write
	// was sent). An ok CS without Value or Accepted cannot be judged and is
	// invalid.
	CS Op = "cs"
)

// Event is one line of a history after the header.
type Event struct {
	// Time is nanoseconds since the run started, on a monotonic clock.
	Time int64 `json:"t"`
	Type Type  `json:"type"`
	// ID pairs an invocation with its completion; a fault's start with its end.
	ID     int    `json:"id"`
	Client string `json:"client,omitempty"`
	Op     Op     `json:"op,omitempty"`
	// Lock names the lock (the partition key of the mutex model).
	Lock string `json:"lock,omitempty"`

	Token    int64  `json:"token,omitempty"`    // fencing token granted, written with, or released
	Lease    int64  `json:"lease,omitempty"`    // acquire ok, lease-lost: the lease a grant rests on
	Value    *int64 `json:"value,omitempty"`    // value read (cs) or final value (final)
	Accepted *bool  `json:"accepted,omitempty"` // whether the resource took the write
	Reason   string `json:"reason,omitempty"`   // why a write was rejected
	Error    string `json:"error,omitempty"`    // the error of a fail or info

	Fault  string     `json:"fault,omitempty"`  // fault events: its name, "kill-leader"
	Spec   *FaultSpec `json:"spec,omitempty"`   // fault events: what it is, typed (format 2)
	Target string     `json:"target,omitempty"` // fault events: resolved target, "m2"

	AliveUntil int64  `json:"alive_until,omitempty"` // lease-lost: last time known alive
	What       string `json:"what,omitempty"`        // observed: what was seen
	Member     string `json:"member,omitempty"`      // observed: the member it concerns
	// WriteAt is when a critical section sent its write (run clock); zero
	// when it sent none or the file predates it.
	WriteAt int64 `json:"write_at,omitempty"`
	// StalledFrom is when an observed stall, starvation or leaderless
	// span began (run clock).
	StalledFrom int64 `json:"stalled_from,omitempty"`
	// RenewedAt (lease-lost) is when the client last sent a keep-alive for
	// the lease, at or before AliveUntil (run clock; zero: none seen), and
	// LeaseTTL the TTL the server granted the lease, in nanoseconds (zero:
	// not known). Together they tell a lease its lock kept renewing, which
	// the server or the link let lapse, from one the lock let go.
	RenewedAt int64 `json:"renewed_at,omitempty"`
	LeaseTTL  int64 `json:"lease_ttl,omitempty"`
	// Renewals (lease-lost) are the keep-alives the client sent for the
	// lease that the lab saw, the latest few up to the event, after the
	// moment the lease was granted (which starts its TTL as a keep-alive
	// does), oldest first (run clock): whether it went on renewing after a
	// fault healed, or had renewed just before it, is how a fault that
	// could not have starved the lease is told from one that could.
	Renewals []int64 `json:"renewals,omitempty"`
	// KeptAlive (lease-lost) are the answers the client received to its
	// keep-alives for the lease while it was alive (a TTL above zero), the
	// latest few up to the event, oldest first (run clock): each is the
	// server's word to the client that its lease lived on. A gap of a TTL
	// between two of them is a client that could not know its lease
	// lived, and may rightly have given it up.
	KeptAlive []int64 `json:"kept_alive,omitempty"`
	// RevokedAt (lease-lost) is when the server answered the client's own
	// revoke of the lease (run clock; zero: it did not, that the lab saw):
	// the lease lived until its client ended it — a lock that releases by
	// revoking, or gives up the lease it took for one attempt — and did
	// not lapse.
	RevokedAt int64 `json:"revoked_at,omitempty"`
	// Tells (an acquire's ok) says the grant came with a Grant.Lost the
	// lab follows: the lock can tell its holder that its lease is gone
	// (ObservedToldLost).
	Tells bool `json:"tells,omitempty"`
	// Deadline (an acquire's invoke) is when the context the lab gave the
	// lock's Acquire ends — for a lock run as a process, with the time the
	// lab allows to stop it — (run clock; zero: not recorded). The lock
	// must answer by then, or within DeadlineGrace after.
	Deadline int64 `json:"deadline,omitempty"`
	// Key, KeyRevision and TokenAhead (observed bad-token) say how a
	// grant's token and key disagree (see ObservedBadToken).
	Key         string `json:"key,omitempty"`
	KeyRevision int64  `json:"key_revision,omitempty"`
	TokenAhead  bool   `json:"token_ahead,omitempty"`
}

// IsCompletion reports whether e ends an operation.
func (e Event) IsCompletion() bool { return e.Type == Ok || e.Type == Fail || e.Type == Info }

// definite marks an error whose operation certainly did not take effect.
type definite struct{ error }

func (d definite) Unwrap() error { return d.error }

// Definite marks err as definite: the operation that returned it certainly
// had no effect (a rejected compare, a lock refused before any write).
// Classify then calls it a Fail rather than an Info.
func Definite(err error) error {
	if err == nil {
		return nil
	}
	return definite{err}
}

// Classify decides, in one place, how an operation's error is recorded: no
// error is Ok; an error marked with Definite is Fail; everything else —
// timeouts, cancellations, lost connections, errors nobody vouched for — is
// Info, because the operation may have taken effect. Guessing Fail where the
// truth is "unknown" would make a checker accept a history it should reject.
func Classify(err error) Type {
	var d definite
	switch {
	case err == nil:
		return Ok
	case errors.As(err, &d):
		return Fail
	}
	return Info
}

// RunErrorEvent is the ObservedRunError event that ends events with the
// run's own error err: at the time of the last of them.
func RunErrorEvent(events []Event, err string) Event {
	var at int64
	if len(events) > 0 {
		at = events[len(events)-1].Time
	}
	return Event{Time: at, Type: Observed, What: ObservedRunError, Error: err}
}

// RunError is what the run's ObservedRunError events say went wrong with
// the run itself, one per line; "" when the run went as its script says.
func RunError(events []Event) string {
	var out []string
	for _, e := range events {
		if e.Type == Observed && e.What == ObservedRunError {
			out = append(out, e.Error)
		}
	}
	return strings.Join(out, "\n")
}
