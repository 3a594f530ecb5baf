package history

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FaultKind names a fault. The kinds are the nemesis's (package faults
// applies them); they are spelled here, once, so that a history can be
// judged and drawn without the code that makes faults.
type FaultKind string

// The fault kinds.
const (
	FaultPartition     FaultKind = "partition"
	FaultHeal          FaultKind = "heal"
	FaultIsolateMember FaultKind = "isolate-member"
	FaultIsolateLeader FaultKind = "isolate-leader"
	FaultCutClient     FaultKind = "cut-client"
	FaultDelayClient   FaultKind = "delay-client"
	FaultKillMember    FaultKind = "kill-member"
	FaultRestartMember FaultKind = "restart-member"
	FaultKillLeader    FaultKind = "kill-leader"
	FaultMoveLeader    FaultKind = "move-leader"
	FaultPauseClient   FaultKind = "pause-client"
	FaultExpireLease   FaultKind = "expire-lease"
	FaultCrashClient   FaultKind = "crash-client"
	FaultLoseAnswer    FaultKind = "lose-answer"
	FaultHoldAnswers   FaultKind = "hold-answers"
	FaultLoseRequest   FaultKind = "lose-request"
	FaultJumpClock     FaultKind = "jump-clock"
	FaultDriftClock    FaultKind = "drift-clock"
)

// FaultKinds lists every fault kind, in a fixed order.
func FaultKinds() []FaultKind {
	return []FaultKind{FaultPartition, FaultHeal, FaultIsolateMember, FaultIsolateLeader, FaultCutClient,
		FaultDelayClient, FaultKillMember, FaultRestartMember, FaultKillLeader, FaultMoveLeader,
		FaultPauseClient, FaultExpireLease, FaultCrashClient, FaultLoseAnswer, FaultHoldAnswers, FaultLoseRequest,
		FaultJumpClock, FaultDriftClock}
}

// FaultSpec is a fault as a history records it: its kind and what it
// named. The fields a kind does not use stay empty. What the fault
// resolved to when applied (the member that led) is the event's Target.
type FaultSpec struct {
	Kind   FaultKind  `json:"kind"`
	Member string     `json:"member,omitempty"`
	Client string     `json:"client,omitempty"`
	Groups [][]string `json:"groups,omitempty"`
	// Delay is a delay-client's delay each way, in nanoseconds.
	Delay int64  `json:"delay,omitempty"`
	Point string `json:"point,omitempty"`
	Mode  string `json:"mode,omitempty"`
	// Offset is how far a jump-clock moves the member's wall clock, in
	// nanoseconds (negative: back).
	Offset int64 `json:"offset,omitempty"`
	// Rate is how fast a drift-clock runs the member's wall clock: 2 is
	// twice the machine's, 0.5 half.
	Rate float64 `json:"rate,omitempty"`
	// AlreadyGone (expire-lease, at its end) says the server had ended the
	// lease before the fault came to end it.
	AlreadyGone bool `json:"already_gone,omitempty"`
}

// String names the fault the way the timeline shows it: "partition m1 |
// m2 m3", "pause-client c1 at before-write".
func (f FaultSpec) String() string {
	switch f.Kind {
	case FaultPartition:
		parts := make([]string, len(f.Groups))
		for i, g := range f.Groups {
			parts[i] = strings.Join(g, " ")
		}
		return "partition " + strings.Join(parts, " | ")
	case FaultHeal, FaultIsolateLeader, FaultKillLeader:
		return string(f.Kind)
	case FaultIsolateMember, FaultKillMember, FaultRestartMember:
		return fmt.Sprintf("%s %s", f.Kind, f.Member)
	case FaultMoveLeader:
		if f.Member == "" {
			return "move-leader"
		}
		return "move-leader to " + f.Member
	case FaultCutClient, FaultCrashClient, FaultLoseAnswer, FaultHoldAnswers, FaultLoseRequest:
		return fmt.Sprintf("%s %s", f.Kind, f.Client)
	case FaultDelayClient:
		return fmt.Sprintf("delay-client %s %v", f.Client, time.Duration(f.Delay))
	case FaultPauseClient:
		return fmt.Sprintf("pause-client %s at %s", f.Client, f.Point)
	case FaultExpireLease:
		return fmt.Sprintf("expire-lease %s (%s)", f.Client, f.Mode)
	case FaultJumpClock:
		return fmt.Sprintf("jump-clock %s %s", cmp.Or(f.Member, f.Client), Signed(time.Duration(f.Offset)))
	case FaultDriftClock:
		return fmt.Sprintf("drift-clock %s ×%s", cmp.Or(f.Member, f.Client), strconv.FormatFloat(f.Rate, 'f', -1, 64))
	}
	return string(f.Kind)
}

// Signed writes d with its sign, "+1m0s" or "-500ms", as a script writes
// a clock's offset.
func Signed(d time.Duration) string {
	if d > 0 {
		return "+" + d.String()
	}
	return d.String()
}

// HoldsClientLink reports whether the fault holds client's own link to the
// cluster: cut, paused, delayed, cut until its lease ends, or holding its
// answers. The answers the server sends the client meanwhile wait in the
// link.
func (f FaultSpec) HoldsClientLink(client string) bool {
	switch f.Kind {
	case FaultCutClient, FaultPauseClient, FaultDelayClient, FaultExpireLease, FaultLoseAnswer, FaultHoldAnswers,
		FaultLoseRequest:
		return client != "" && f.Client == client
	}
	return false
}

// ReachesMembers reports whether f acts on the cluster's members (see
// FaultKind.ReachesMembers): a client's own clock moved does not.
func (f FaultSpec) ReachesMembers() bool {
	clock := f.Kind == FaultJumpClock || f.Kind == FaultDriftClock
	return f.Kind.ReachesMembers() && (!clock || f.Member != "")
}

// ReachesMembers reports whether a fault of the kind acts on the cluster's
// members (partitions, isolates, kills, restarts or moves their leader),
// so that a member left without a leader meanwhile or after is its doing.
// A client's faults, and heal (which undoes faults recorded themselves),
// do not.
func (k FaultKind) ReachesMembers() bool {
	switch k {
	case FaultPartition, FaultIsolateMember, FaultIsolateLeader, FaultKillMember, FaultKillLeader,
		FaultRestartMember, FaultMoveLeader, FaultJumpClock, FaultDriftClock:
		return true
	}
	return false
}

// takesMember reports whether the kind takes one member away from the rest
// (killed or isolated).
func (k FaultKind) takesMember() bool {
	switch k {
	case FaultKillMember, FaultKillLeader, FaultIsolateMember, FaultIsolateLeader:
		return true
	}
	return false
}

// FaultWindow is one fault on the run's clock, from its start to its end.
type FaultWindow struct {
	// ID pairs the fault's start and end events.
	ID   int
	Spec FaultSpec
	// Target is what the fault resolved to when applied ("m2"), from its
	// end event if it says, else its start.
	Target string
	// Start and End bound the window. A fault that never ended (Open)
	// ends with the history's last event.
	Start, End int64
	Open       bool
	// Err is why applying or undoing it failed, if it did.
	Err string
}

// Name is how the fault is shown: "pause-client c1 at before-write".
func (w FaultWindow) Name() string { return w.Spec.String() }

// Member is the member a member fault took away: what it resolved to,
// else the member it names.
func (w FaultWindow) Member() string {
	if w.Target != "" {
		return w.Target
	}
	return w.Spec.Member
}

// Within reports whether t lies in the window.
func (w FaultWindow) Within(t int64) bool { return w.Start <= t && t <= w.End }

// Until is the window's end, or math.MaxInt64 for one that never ended:
// what it excuses lasts past anything the history shows.
func (w FaultWindow) Until() int64 {
	if w.Open {
		return math.MaxInt64
	}
	return w.End
}

// CutsOff reports whether the fault cut member off from the majority:
// killed or isolated, or in a minority side of a partition. The answers
// of a client of that member wait until it rejoins. member "" (a history
// that does not say which member a client uses) is never cut off.
func (w FaultWindow) CutsOff(member string) bool {
	if member == "" {
		return false
	}
	if w.Spec.Kind.takesMember() {
		return w.Member() == member
	}
	if w.Spec.Kind != FaultPartition {
		return false
	}
	total, mine := 0, 0
	for _, g := range w.Spec.Groups {
		total += len(g)
		if slices.Contains(g, member) {
			mine = len(g)
		}
	}
	return mine > 0 && 2*mine <= total
}

// FaultWindows pairs every fault's start with its end, in start order: the
// one place a history's faults become windows.
func FaultWindows(events []Event) []FaultWindow {
	var out []FaultWindow
	open := map[int]int{} // fault id → index in out
	var last int64
	for _, e := range events {
		last = max(last, e.Time)
		switch e.Type {
		case FaultStart:
			open[e.ID] = len(out)
			out = append(out, FaultWindow{ID: e.ID, Spec: e.faultSpec(), Target: e.Target, Start: e.Time, Open: true, Err: e.Error})
		case FaultEnd:
			i, ok := open[e.ID]
			if !ok {
				continue
			}
			delete(open, e.ID)
			w := &out[i]
			w.End, w.Open = e.Time, false
			if e.Target != "" {
				w.Target = e.Target
			}
			if e.Error != "" {
				w.Err = e.Error
			}
			if e.faultSpec().AlreadyGone {
				w.Spec.AlreadyGone = true
			}
		}
	}
	for i := range out {
		if out[i].Open {
			out[i].End = last
		}
	}
	return out
}

// faultSpec is a fault event's spec: the one it carries, or for a file
// written before format 2 (which named faults only as text) the one its
// name spells.
func (e Event) faultSpec() FaultSpec {
	if e.Spec != nil {
		return *e.Spec
	}
	return parseFaultName(e.Fault, e.Target)
}

// parseFaultName reads a fault's name as format 1 wrote it (FaultSpec's
// String). It is the reader of those older files, nothing else: since
// format 2 every fault event carries its spec.
func parseFaultName(name, target string) FaultSpec {
	f := strings.Fields(name)
	if len(f) == 0 {
		return FaultSpec{}
	}
	s := FaultSpec{Kind: FaultKind(f[0])}
	arg := func(i int) string {
		if i < len(f) {
			return f[i]
		}
		return ""
	}
	switch s.Kind {
	case FaultPartition:
		for _, g := range strings.Split(strings.TrimPrefix(name, "partition "), "|") {
			s.Groups = append(s.Groups, strings.Fields(g))
		}
	case FaultIsolateMember, FaultKillMember, FaultRestartMember:
		s.Member = arg(1)
	case FaultMoveLeader:
		s.Member = arg(2) // "move-leader to m2"
	case FaultCutClient, FaultCrashClient, FaultLoseAnswer, FaultHoldAnswers, FaultLoseRequest:
		s.Client = arg(1)
	case FaultDelayClient:
		s.Client = arg(1)
		d, _ := time.ParseDuration(arg(2))
		s.Delay = int64(d)
	case FaultPauseClient:
		s.Client, s.Point = arg(1), arg(3) // "pause-client c1 at before-write"
	case FaultJumpClock:
		s.Member = arg(1)
		d, _ := time.ParseDuration(arg(2))
		s.Offset = int64(d)
	case FaultDriftClock:
		s.Member = arg(1)
		s.Rate, _ = strconv.ParseFloat(strings.TrimPrefix(arg(2), "×"), 64) // "drift-clock m1 ×2"
	case FaultExpireLease:
		s.Client, s.Mode = arg(1), strings.Trim(arg(2), "()")
		s.AlreadyGone = strings.Contains(target, "already gone")
	}
	return s
}
