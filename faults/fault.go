package faults

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Kind names a fault.
type Kind string

// The fault kinds. Faults on members need a cluster the lab owns; faults on
// clients work on any cluster, because every client reaches its member through
// the lab's proxy.
const (
	Partition     Kind = "partition"      // split members into Groups; undo heals
	Heal          Kind = "heal"           // remove every peer cut
	IsolateMember Kind = "isolate-member" // cut Member off from all other members; undo heals
	IsolateLeader Kind = "isolate-leader" // the same, for whoever leads at the time
	CutClient     Kind = "cut-client"     // cut Client's link both ways; undo heals it
	DelayClient   Kind = "delay-client"   // delay Client's link by Delay each way; undo removes it
	KillMember    Kind = "kill-member"    // crash Member; undo restarts it on its data dir
	RestartMember Kind = "restart-member" // start a killed Member again
	KillLeader    Kind = "kill-leader"    // crash whoever leads and wait for a new leader; undo restarts it
	MoveLeader    Kind = "move-leader"    // hand leadership to Member (or any other member)
	PauseClient   Kind = "pause-client"   // freeze Client at pause Point and cut its link; undo resumes
	ExpireLease   Kind = "expire-lease"   // end Client's lease: Mode revoke, or lapse (cut until the server drops it); undo heals
	CrashClient   Kind = "crash-client"   // kill Client as SIGKILL would (its lease lives on to its TTL) and start it again
)

// Kinds lists every fault kind, in a fixed order.
var Kinds = []Kind{Partition, Heal, IsolateMember, IsolateLeader, CutClient, DelayClient,
	KillMember, RestartMember, KillLeader, MoveLeader, PauseClient, ExpireLease, CrashClient}

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
}

// String describes f the way the timeline shows it: "partition m1 | m2 m3",
// "pause c1 at before-write".
func (f Fault) String() string {
	switch f.Kind {
	case Partition:
		parts := make([]string, len(f.Groups))
		for i, g := range f.Groups {
			parts[i] = strings.Join(g, " ")
		}
		return "partition " + strings.Join(parts, " | ")
	case Heal, IsolateLeader, KillLeader:
		return string(f.Kind)
	case IsolateMember, KillMember, RestartMember:
		return fmt.Sprintf("%s %s", f.Kind, f.Member)
	case MoveLeader:
		if f.Member == "" {
			return "move-leader"
		}
		return "move-leader to " + f.Member
	case CutClient, CrashClient:
		return fmt.Sprintf("%s %s", f.Kind, f.Client)
	case DelayClient:
		return fmt.Sprintf("delay-client %s %v", f.Client, f.Delay)
	case PauseClient:
		return fmt.Sprintf("pause-client %s at %s", f.Client, f.Point)
	case ExpireLease:
		return fmt.Sprintf("expire-lease %s (%s)", f.Client, f.Mode)
	}
	return string(f.Kind)
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
	case CutClient, CrashClient:
		return need(f.Client != "", "a client")
	case DelayClient:
		return errors.Join(need(f.Client != "", "a client"), need(f.Delay > 0, "a positive delay"))
	case PauseClient:
		return errors.Join(need(f.Client != "", "a client"), need(f.Point != "", "a pause point"))
	case ExpireLease:
		return errors.Join(need(f.Client != "", "a client"),
			need(f.Mode == ModeRevoke || f.Mode == ModeLapse, "mode revoke or lapse"))
	}
	return fmt.Errorf("unknown fault kind %q (kinds: %v)", f.Kind, Kinds)
}

// NeedsOwnedCluster reports whether the kind acts on members, which only a
// cluster the lab started can do.
func (k Kind) NeedsOwnedCluster() bool {
	return !slices.Contains([]Kind{CutClient, DelayClient, PauseClient, ExpireLease, CrashClient}, k)
}

// CutsOffMember reports whether the kind takes one member away from the
// rest (killed or isolated): its Injection's Target names that member.
func (k Kind) CutsOffMember() bool {
	return slices.Contains([]Kind{IsolateMember, IsolateLeader, KillMember, KillLeader}, k)
}

// ParseKind checks a kind name.
func ParseKind(s string) (Kind, error) {
	k := Kind(s)
	if !slices.Contains(Kinds, k) {
		return "", fmt.Errorf("unknown fault kind %q (kinds: %v)", s, Kinds)
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
