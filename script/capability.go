package script

import (
	"slices"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/lock/resource"
)

// A Capability is something a store's run can do that a lesson may need:
// a fault of its own (revoke a lease, fail a primary over), a wait only it
// can tell (a client served again), or a way its servers and clients
// behave that a lesson is written for (a client stays on its member). A
// store says what it can as data (Capabilities); a lesson runs on a store
// that can do all it needs, and a script's needs are read from its
// commands (Needs).
type Capability string

// The capabilities the catalog's lessons and scripts need. A store that
// does none of these still runs every lesson made of acquires, releases,
// pauses, cuts, delays and crashes, which every run can do.
const (
	// OneStore: the lock is kept by one store, whose servers replicate it
	// (etcd, a Redis primary, a ZooKeeper ensemble); a lesson that needs no
	// shape of store needs this one.
	OneStore Capability = "one-store"
	// Masters: the lock is a majority of keys on independent masters
	// (Redlock's).
	Masters Capability = "masters"
	// Revoke: expire mode=revoke, a client's lease ended by the server now.
	Revoke Capability = "revoke"
	// Lapse: expire mode=lapse, a client cut off until the server ends its
	// lease.
	Lapse Capability = "lapse"
	// AcquireAnswerLost: acquire answer=lost, an acquire's write made and
	// its answer lost on the wire.
	AcquireAnswerLost Capability = "acquire-answer-lost"
	// ReleaseAnswerLost: release answer=lost, a release made and its answer
	// lost on the wire.
	ReleaseAnswerLost Capability = "release-answer-lost"
	// AcquireNextLost: acquire next=lost, the request after an acquire's
	// write lost on the wire.
	AcquireNextLost Capability = "acquire-next-lost"
	// Split: pause at=in-release, a client stopped between the commands
	// of its release (after its first request), told apart on the wire.
	Split Capability = "split"
	// SplitAcquire: pause at=in-acquire, a client stopped between the
	// commands of its acquire (after its first write), told apart on the
	// wire.
	SplitAcquire Capability = "split-acquire"
	// HoldAnswers: hold-answers, a link failing one way from a client's
	// next keep-alive.
	HoldAnswers Capability = "hold-answers"
	// KillMember: kill member=mN, a member killed and restarted on its
	// data at heal.
	KillMember Capability = "kill"
	// IsolateMember: isolate member=mN, a member cut off from the others.
	IsolateMember Capability = "isolate"
	// KillLeader: kill member=leader, whichever member leads killed.
	KillLeader Capability = "kill-leader"
	// WaitServed: wait-served, until every client is served again after a
	// member's fault.
	WaitServed Capability = "wait-served"
	// Failover: failover, a primary killed and a replica promoted.
	Failover Capability = "failover"
	// JumpClock: jump-clock, a server's wall clock moved forward or back;
	// drift-clock, run fast or slow.
	JumpClock Capability = "jump-clock"
	// Restart: restart, a server crashed and started again at once.
	Restart Capability = "restart"
	// Durable: a server restarted keeps what it acknowledged (PostgreSQL's
	// committed rows and sequences), though not its sessions.
	Durable Capability = "durable"
	// Volatile: a server restarted keeps nothing (Redis without RDB or
	// AOF, as the lab runs it).
	Volatile Capability = "volatile"
	// WallClockLeases: the store ends a lease by its server's wall clock
	// (Redis expires a key so), which a jump moves.
	WallClockLeases Capability = "wall-clock-leases"
	// MonotonicLeases: the store times its leases on a monotonic clock
	// (ZooKeeper's sessions), which no wall-clock jump moves.
	MonotonicLeases Capability = "monotonic-leases"
	// Told: the store tells a client that its lease ended (a keep-alive's
	// answer, a session's expiry), so a lock can tell its holder
	// (wait-told).
	Told Capability = "told"
	// KeepAlives: a lease is kept by keep-alives the lab sees on the wire,
	// each with its answer, so a lesson can time them (link-blip,
	// slow-link).
	KeepAlives Capability = "keep-alives"
	// CutLink: cut cN member=mK, one of a client's links cut, the one to
	// member (Redlock's client has one to each master).
	CutLink Capability = "cut-link"
	// PinnedClients: a client stays on its member: when the member is down
	// or cut off from the others, the client's lease ends and the client
	// still reaches what the member answers alone (etcd's clients, one
	// endpoint each).
	PinnedClients Capability = "pinned-clients"
)

// capabilityWords say each capability as what a store can do, for a
// reason's words ("a store that can revoke a client's lease").
var capabilityWords = map[Capability]string{
	OneStore:          "keep the lock in one store whose servers replicate it",
	Masters:           "keep the lock on a majority of independent masters",
	Revoke:            "revoke a client's lease (expire mode=revoke)",
	Lapse:             "let a cut-off client's lease lapse (expire mode=lapse)",
	AcquireAnswerLost: "lose an acquire's answer on the wire (acquire answer=lost)",
	ReleaseAnswerLost: "lose a release's answer on the wire (release answer=lost)",
	AcquireNextLost:   "lose the request after an acquire's write (acquire next=lost)",
	Split:             "stop a client between the commands of its release (pause at=in-release)",
	SplitAcquire:      "stop a client between the commands of its acquire (pause at=in-acquire)",
	HoldAnswers:       "hold a client's answers from its next keep-alive (hold-answers)",
	KillMember:        "kill a member and restart it on its data (kill)",
	IsolateMember:     "cut a member off from the others (isolate)",
	KillLeader:        "kill whichever member leads (kill member=leader)",
	WaitServed:        "tell when every client is served again after a member's fault (wait-served)",
	Failover:          "fail its primary over to a replica (failover)",
	JumpClock:         "move a server's wall clock forward or back (jump-clock)",
	Restart:           "crash a server and start it again at once (restart)",
	Durable:           "keep what a server acknowledged across its restart",
	Volatile:          "restart a server with nothing it had",
	WallClockLeases:   "end a lease by its server's wall clock",
	MonotonicLeases:   "time its leases on a monotonic clock",
	Told:              "tell a client that its lease ended, so that its lock can tell the holder (wait-told)",
	KeepAlives:        "show each keep-alive of a lease on the wire, with its answer",
	CutLink:           "cut a client's link to one of its servers, its others left (cut member=)",
	PinnedClients:     "keep a client on its member when the member is down or cut off, its lease ending",
}

// Words says what a store with c can do, in a reason's words.
func (c Capability) Words() string {
	if w, ok := capabilityWords[c]; ok {
		return w
	}
	return string(c)
}

// Capabilities are what a store's run can do, each with how it does it
// there ("LeaseRevoke on the client's lease").
type Capabilities map[Capability]string

// Lacks lists the capabilities of needs that c does not have, in needs'
// order; none when c can do them all.
func (c Capabilities) Lacks(needs []Capability) []Capability {
	var out []Capability
	for _, n := range needs {
		if _, ok := c[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}

// Needs are the capabilities steps need beside what every run can do, in
// the order their commands first need them.
func Needs(steps []Step) []Capability {
	var out []Capability
	add := func(cs ...Capability) {
		for _, c := range cs {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	for _, st := range steps {
		add(needsOf(st.Cmd)...)
	}
	return out
}

// needsOf is what one command needs beside what every run can do.
func needsOf(c Cmd) []Capability {
	switch c.Name {
	case "acquire":
		var out []Capability
		if c.Answer != "" {
			out = append(out, AcquireAnswerLost)
		}
		if c.Next != "" {
			out = append(out, AcquireNextLost)
		}
		return out
	case "release":
		if c.Answer != "" {
			return []Capability{ReleaseAnswerLost}
		}
	case "pause":
		switch c.At {
		case resource.InAcquire:
			return []Capability{SplitAcquire}
		case resource.InRelease:
			return []Capability{Split}
		}
	case "expire":
		if c.Mode == faults.ModeLapse {
			return []Capability{Lapse}
		}
		return []Capability{Revoke}
	case "kill":
		if c.Member == Leader {
			return []Capability{KillLeader}
		}
		return []Capability{KillMember}
	case "isolate":
		return []Capability{IsolateMember}
	case "cut":
		if c.Member != "" {
			return []Capability{CutLink}
		}
	case "hold-answers":
		return []Capability{HoldAnswers}
	case "wait-served":
		return []Capability{WaitServed}
	case "wait-told":
		return []Capability{Told}
	case "failover":
		return []Capability{Failover}
	case "drift-clock":
		if c.Client != "" {
			return nil // the client's own clock, as for jump-clock
		}
		return []Capability{JumpClock}
	case "jump-clock":
		if c.Client != "" {
			return nil // the client's own clock: its lock's, which every run can move where the lock is a program
		}
		return []Capability{JumpClock}
	case "restart":
		return []Capability{Restart}
	}
	return nil
}

// WalkNeeds are the capabilities a walk's fault kind needs of a store on
// leases of ttl seconds (see WalkFaults): a blip holds answers on long
// leases, an isolated holder must stay on its member.
func WalkNeeds(kind string, ttl int) []Capability {
	switch kind {
	case WalkExpire:
		return []Capability{Revoke}
	case WalkLostAcquire:
		return []Capability{AcquireAnswerLost}
	case WalkBlip:
		if ttl >= heldBlipMinTTL {
			return []Capability{HoldAnswers}
		}
	case WalkIsolate:
		return []Capability{IsolateMember, PinnedClients}
	}
	return nil
}

// WalkFaultsOn are those of kinds a store that can do can make, on leases
// of ttl seconds, in kinds' order.
func WalkFaultsOn(can Capabilities, kinds []string, ttl int) []string {
	var out []string
	for _, k := range kinds {
		if len(can.Lacks(WalkNeeds(k, ttl))) == 0 {
			out = append(out, k)
		}
	}
	return out
}
