package faults

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/history"
)

// Kind names a fault.
type Kind string

// The fault kinds. Faults on members need a cluster the lab owns; faults on
// clients work on any cluster, because every client reaches its member through
// the lab's proxy.
const (
	Partition     = Kind(history.FaultPartition)     // split members into Groups; undo heals
	Heal          = Kind(history.FaultHeal)          // remove every peer cut
	IsolateMember = Kind(history.FaultIsolateMember) // cut Member off from all other members; undo heals
	IsolateLeader = Kind(history.FaultIsolateLeader) // the same, for whoever leads at the time
	CutClient     = Kind(history.FaultCutClient)     // cut Client's link both ways; undo heals it
	DelayClient   = Kind(history.FaultDelayClient)   // delay Client's link by Delay each way; undo removes it
	KillMember    = Kind(history.FaultKillMember)    // crash Member; undo restarts it on its data dir
	RestartMember = Kind(history.FaultRestartMember) // start a killed Member again
	KillLeader    = Kind(history.FaultKillLeader)    // crash whoever leads and wait for a new leader; undo restarts it
	MoveLeader    = Kind(history.FaultMoveLeader)    // hand leadership to Member (or any other member)
	PauseClient   = Kind(history.FaultPauseClient)   // freeze Client at pause Point and cut its link; undo resumes
	ExpireLease   = Kind(history.FaultExpireLease)   // end Client's lease: Mode revoke, or lapse (cut until the server drops it); undo heals
	CrashClient   = Kind(history.FaultCrashClient)   // kill Client as SIGKILL would (its lease lives on to its TTL) and start it again
	LoseAnswer    = Kind(history.FaultLoseAnswer)    // from Client's next write on, hold its answers; undo drops them (severs its connections) and heals
	HoldAnswers   = Kind(history.FaultHoldAnswers)   // from Client's next keep-alive on, hold its answers; undo delivers them
	LoseRequest   = Kind(history.FaultLoseRequest)   // from the request Client sends after its next write, cut its link; undo severs its connections and heals
	JumpClock     = Kind(history.FaultJumpClock)     // move Member's (or Client's own) wall clock by Offset; undo sets it right
	DriftClock    = Kind(history.FaultDriftClock)    // run Member's (or Client's own) wall clock at Rate times the machine's; undo sets it right
)

// Kinds lists every fault kind, in a fixed order, a fresh slice each call.
func Kinds() []Kind { return slices.Clone(kinds) }

// kinds are every fault kind, in a fixed order.
var kinds = []Kind{Partition, Heal, IsolateMember, IsolateLeader, CutClient, DelayClient,
	KillMember, RestartMember, KillLeader, MoveLeader, PauseClient, ExpireLease, CrashClient, LoseAnswer, HoldAnswers, LoseRequest,
	JumpClock, DriftClock}

// Describe says in one line what a fault of kind k does ("" for a kind
// that is none of the lab's).
func Describe(k Kind) string { return descriptions[k] }

var descriptions = map[Kind]string{
	Partition:     "split the members into groups that cannot reach one another; healed when it ends",
	Heal:          "remove every cut between members",
	IsolateMember: "cut one member off from the others (its clients still reach it); healed when it ends",
	IsolateLeader: "the same, for whichever member leads at the time",
	CutClient:     "cut a client's link to its member both ways; healed when it ends",
	DelayClient:   "delay every message on a client's link, each way; removed when it ends",
	KillMember:    "crash a member (its process state gone, its data directory kept); restarted when it ends",
	RestartMember: "start a killed member again on its data directory",
	KillLeader:    "crash whichever member leads and wait for a new leader; restarted when it ends",
	MoveLeader:    "hand the leadership to another member",
	PauseClient:   "freeze a client at a point of its work (SIGSTOP for a process) with its link cut; resumed when it ends",
	ExpireLease:   "end a client's lease on the server: revoked at once, or lapsed by cutting the client until the server drops it",
	CrashClient:   "kill a client as SIGKILL would (its lease lives on to its TTL) and start it again",
	LoseAnswer:    "from a client's next write on, hold the answers its member sends; dropped when it ends (its connections severed)",
	HoldAnswers:   "from a client's next keep-alive on, hold the answers its member sends (its requests still arrive); delivered when it ends",
	LoseRequest:   "from the request a client sends after its next write, cut its link both ways; dropped when it ends (its connections severed)",
	JumpClock:     "move a server's wall clock, or a client's own (a lock run as a program), forward or back (its monotonic clock untouched); set right when it ends",
	DriftClock:    "run a server's wall clock, or a client's own (a lock run as a program), fast or slow at a rate of the machine's (its monotonic clock untouched); set right when it ends",
}

// Lease expiry modes.
const (
	ModeRevoke = "revoke" // revoke the lease now
	ModeLapse  = "lapse"  // cut the client and wait until the server reports the lease gone
)

// Fault is one fault as a value: what to do, not what was done. The fields a
// kind needs are listed beside the kind; the others stay empty. Faults are
// compared and serialised as plain data.
type Fault struct {
	Kind   Kind       `json:"kind"`
	Member string     `json:"member,omitempty"`
	Client string     `json:"client,omitempty"`
	Groups [][]string `json:"groups,omitempty"`
	Delay  Duration   `json:"delay,omitempty"`
	Point  string     `json:"point,omitempty"`
	Mode   string     `json:"mode,omitempty"`
	// Offset is how far a jump-clock moves the wall clock (negative: back).
	Offset Duration `json:"offset,omitempty"`
	// Rate is how fast a drift-clock runs the wall clock (2: twice the
	// machine's).
	Rate float64 `json:"rate,omitempty"`
}

// String describes f the way the timeline shows it: "partition m1 | m2 m3",
// "pause-client c1 at before-write".
func (f Fault) String() string { return f.Spec().String() }

// Spec is f as a history records it.
func (f Fault) Spec() history.FaultSpec {
	return history.FaultSpec{Kind: history.FaultKind(f.Kind), Member: f.Member, Client: f.Client,
		Groups: f.Groups, Delay: int64(f.Delay), Point: f.Point, Mode: f.Mode, Offset: int64(f.Offset), Rate: f.Rate}
}

// Validate reports a fault that lacks what its kind needs.
func (f Fault) Validate() error {
	need := func(ok bool, what string) error {
		if !ok {
			return fmt.Errorf("fault %s: needs %s", f.Kind, what)
		}
		return nil
	}
	switch f.Kind {
	case Partition:
		return need(len(f.Groups) > 0, "groups")
	case Heal, IsolateLeader, KillLeader, MoveLeader:
		return nil
	case IsolateMember, KillMember, RestartMember:
		return need(f.Member != "", "a member")
	case JumpClock:
		return errors.Join(need((f.Member != "") != (f.Client != ""), "a member or a client"), need(f.Offset != 0, "an offset"))
	case DriftClock:
		return errors.Join(need((f.Member != "") != (f.Client != ""), "a member or a client"), need(f.Rate > 0 && f.Rate != 1, "a rate other than 1"))
	case CutClient, CrashClient, LoseAnswer, HoldAnswers, LoseRequest:
		return need(f.Client != "", "a client")
	case DelayClient:
		return errors.Join(need(f.Client != "", "a client"), need(f.Delay > 0, "a positive delay"))
	case PauseClient:
		return errors.Join(need(f.Client != "", "a client"), need(f.Point != "", "a pause point"))
	case ExpireLease:
		return errors.Join(need(f.Client != "", "a client"),
			need(f.Mode == ModeRevoke || f.Mode == ModeLapse, "mode revoke or lapse"))
	}
	return fmt.Errorf("unknown fault kind %q (kinds: %v)", f.Kind, kinds)
}

// NeedsOwnedCluster reports whether the kind acts on members, which only a
// cluster the lab started can do.
func (k Kind) NeedsOwnedCluster() bool {
	return !slices.Contains([]Kind{CutClient, DelayClient, PauseClient, ExpireLease, CrashClient, LoseAnswer, HoldAnswers, LoseRequest}, k)
}

// CutsOffMember reports whether the kind takes one member away from the
// rest (killed or isolated): its Injection's Target names that member.
func (k Kind) CutsOffMember() bool {
	return slices.Contains([]Kind{IsolateMember, IsolateLeader, KillMember, KillLeader}, k)
}

// ParseKind checks a kind name.
func ParseKind(s string) (Kind, error) {
	k := Kind(s)
	if !slices.Contains(kinds, k) {
		return "", fmt.Errorf("unknown fault kind %q (kinds: %v)", s, kinds)
	}
	return k, nil
}

// Duration is a time.Duration that reads and writes JSON as "1.5s".
type Duration time.Duration

// String formats d as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string such as "250ms".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"250ms\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }
