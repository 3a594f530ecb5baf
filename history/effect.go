package history

// EffectKind names an effect: something a scenario claims happens in every
// run of it. Package models judges each kind from the history alone.
type EffectKind string

// The effects. Clients lists the clients an effect names, in the order its
// description gives: "A was granted while B …" is [A, B].
const (
	// EffectLeaseEndedDuring: Clients[0]'s lease ended on the server inside
	// a window of Fault on Clients[0] — or on Clients[1], if named (a
	// member: "m1's clock had jumped"); What says what held it ("paused").
	EffectLeaseEndedDuring EffectKind = "lease-ended-during"
	// EffectGrantedDuring: Clients[0] was granted while a Fault held on
	// Clients[1] (What: "c1 was paused").
	EffectGrantedDuring EffectKind = "granted-during"
	// EffectQueuedThenExpired: Clients[0] was seen queued, then its lease
	// ended while its acquire still waited.
	EffectQueuedThenExpired EffectKind = "queued-then-expired"
	// EffectReleasedWhileWaiting: Clients[0] (the holder) released after
	// Clients[1] (the waiter) was seen queued.
	EffectReleasedWhileWaiting EffectKind = "released-while-waiting"
	// EffectReleaseUnanswered: the server showed Clients[0]'s release took
	// effect while the client had no answer, and it never got one.
	EffectReleaseUnanswered EffectKind = "release-unanswered"
	// EffectAcquireUnanswered: the server showed the key Clients[0]'s
	// acquire wrote while the client had no answer, and the acquire then
	// ended without a grant.
	EffectAcquireUnanswered EffectKind = "acquire-unanswered"
	// EffectBlippedHolding: Clients[0]'s link was cut for less than TTL
	// while it held the lock, and it held on for at least TTL after the
	// link came back.
	EffectBlippedHolding EffectKind = "blipped-holding"
	// EffectBlippedWaiting: Clients[0]'s link was cut for less than TTL
	// while its acquire waited, and the acquire went on waiting past it.
	EffectBlippedWaiting EffectKind = "blipped-waiting"
	// EffectSlowHolding: Clients[0]'s link delayed every message while it
	// held the lock, for at least TTL of its hold.
	EffectSlowHolding EffectKind = "slow-holding"
	// EffectSlowGranted: Clients[0] asked for the lock and was granted it
	// while its link delayed every message.
	EffectSlowGranted EffectKind = "slow-granted"
	// EffectRegrantedBeforeRetry: after its unanswered release Clients[0]
	// was granted again on the same lease, Clients[1] queued behind it,
	// before it released anything else.
	EffectRegrantedBeforeRetry EffectKind = "regranted-before-retry"
	// EffectLateReleaseWhileHeld: Clients[0]'s release was sent while
	// Clients[1] held the lock and Clients[2] waited.
	EffectLateReleaseWhileHeld EffectKind = "late-release-while-held"
	// EffectCutOffLeasesEnded: every client of the member a Fault took away
	// lost a lease while it held; What says what became of the member.
	EffectCutOffLeasesEnded EffectKind = "cut-off-leases-ended"
	// EffectOthersGranted: while a Fault held, a client of another member
	// was granted — under a leader other than the member taken away, if
	// NewLeader. What says what became of the member ("down").
	EffectOthersGranted EffectKind = "others-granted"
	// EffectAskedCutOff: Clients[0] asked for the lock through its member
	// while the member was isolated, after the server had ended Clients[0]'s
	// lease, and was answered before the member rejoined.
	EffectAskedCutOff EffectKind = "asked-cut-off"
	// EffectRejoined: after a Fault ended, every client of the member it
	// took away was granted again.
	EffectRejoined EffectKind = "rejoined"
	// EffectContended: at least half the grants were contested.
	EffectContended EffectKind = "contended"
	// EffectRequestLost: Clients[0]'s acquire made its write, then the
	// request it sent next was lost with its connection, while the acquire
	// was under way.
	EffectRequestLost EffectKind = "request-lost"
	// EffectHeldPastTTL: some holder held the lock longer than TTL while
	// another client waited.
	EffectHeldPastTTL EffectKind = "held-past-ttl"
	// EffectAllFaultsApplied: the history has faults, each applied and
	// undone without an error.
	EffectAllFaultsApplied EffectKind = "all-faults-applied"
	// EffectCrashedHolding: Clients[0] crashed while it held the lock.
	EffectCrashedHolding EffectKind = "crashed-holding"
	// EffectWaitedOutLease: Clients[0], queued before Clients[1] crashed,
	// was granted in that wait once Clients[1]'s lease ended.
	EffectWaitedOutLease EffectKind = "waited-out-lease"
	// EffectCrashedPaused: Clients[0] crashed while a pause of it held
	// (What says where it was stopped: "in its acquire").
	EffectCrashedPaused EffectKind = "crashed-paused"
	// EffectGaveUp: Clients[0]'s acquire reached its deadline while
	// Clients[1] held the lock.
	EffectGaveUp EffectKind = "gave-up"
)

// Effect is one claimed effect as data, written into a history's header so
// that a check of the file alone judges it as the run did.
type Effect struct {
	Kind    EffectKind `json:"kind"`
	Clients []string   `json:"clients,omitempty"`
	// Fault is the kind of fault the effect is about.
	Fault FaultKind `json:"fault,omitempty"`
	// What completes the effect's description ("paused", "down").
	What string `json:"what,omitempty"`
	// NewLeader (others-granted): the grant must come under a new leader.
	NewLeader bool `json:"new_leader,omitempty"`
	// TTL (held-past-ttl), in nanoseconds.
	TTL int64 `json:"ttl,omitempty"`
}

// Client is the i-th client the effect names, or "".
func (e Effect) Client(i int) string {
	if i < len(e.Clients) {
		return e.Clients[i]
	}
	return ""
}
