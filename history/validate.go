package history

import (
	"fmt"
	"slices"
)

var knownOps = []Op{Acquire, Release, CS}

// Validate checks events the way Decode checks a file: times never go
// backwards, every completion follows its own invocation, a client runs one
// operation at a time, fault windows pair up, an ok critical section says
// what it read and what became of its write. Checkers call it first, so that
// a broken history is reported as broken rather than judged.
func Validate(events []Event) error {
	v := newValidator()
	for i, e := range events {
		if msg := v.check(e, i+1); msg != "" {
			return fmt.Errorf("history: event %d: %s", i+1, msg)
		}
	}
	return nil
}

// validator checks the assumptions every checker makes of a history, one
// event at a time: time never goes backwards, a completion follows its own
// invocation, and a client runs one operation at a time.
type validator struct {
	lastTime int64
	open     map[int]openOp // invocations awaiting completion, by id
	done     map[int]bool   // ids completed
	busy     map[string]int // client → its open operation's id
	faults   map[int]bool   // fault ids started and not ended
	ended    map[int]bool
}

type openOp struct {
	client string
	op     Op
	line   int
}

func newValidator() validator {
	return validator{open: map[int]openOp{}, done: map[int]bool{}, busy: map[string]int{},
		faults: map[int]bool{}, ended: map[int]bool{}}
}

// check returns what is wrong with e on line, or "".
func (v *validator) check(e Event, line int) string {
	if e.Time < 0 {
		return fmt.Sprintf("negative time %d", e.Time)
	}
	if e.Time < v.lastTime {
		return fmt.Sprintf("time goes backwards: %d after %d", e.Time, v.lastTime)
	}
	v.lastTime = e.Time
	if err := eventNames(e); err != nil {
		return err.Error()
	}
	if e.Token < 0 || e.Lease < 0 {
		return fmt.Sprintf("negative token %d or lease %d", e.Token, e.Lease)
	}
	switch e.Type {
	case Invoke:
		return v.invoke(e, line)
	case Ok, Fail, Info:
		return v.complete(e)
	case FaultStart, FaultEnd:
		return v.fault(e)
	case LeaseLost:
		if e.Client == "" {
			return "lease-lost without a client"
		}
		switch {
		case e.AliveUntil > e.Time:
			return fmt.Sprintf("lease-lost: alive_until %d is after the event's time %d", e.AliveUntil, e.Time)
		case e.RenewedAt < 0 || e.RenewedAt > e.AliveUntil:
			return fmt.Sprintf("lease-lost: renewed_at %d is not between 0 and alive_until %d", e.RenewedAt, e.AliveUntil)
		case e.LeaseTTL < 0:
			return fmt.Sprintf("lease-lost: negative lease_ttl %d", e.LeaseTTL)
		case !slices.IsSorted(e.Renewals) || len(e.Renewals) > 0 && (e.Renewals[0] < 0 || e.Renewals[len(e.Renewals)-1] > e.Time):
			return fmt.Sprintf("lease-lost: renewals %v are not in order between 0 and the event's time %d", e.Renewals, e.Time)
		case !slices.IsSorted(e.KeptAlive) || len(e.KeptAlive) > 0 && (e.KeptAlive[0] < 0 || e.KeptAlive[len(e.KeptAlive)-1] > e.Time):
			return fmt.Sprintf("lease-lost: kept_alive %v are not in order between 0 and the event's time %d", e.KeptAlive, e.Time)
		case e.RevokedAt < 0 || e.RevokedAt > e.Time:
			return fmt.Sprintf("lease-lost: revoked_at %d is not between 0 and the event's time %d", e.RevokedAt, e.Time)
		}
		return ""
	case Observed:
		switch {
		case e.What == "":
			return "observed without what"
		case (e.What == ObservedConnected || e.What == ObservedQueued || e.What == ObservedReleased || e.What == ObservedAcquireWritten || e.What == ObservedGrantGone || e.What == ObservedReleaseKept || e.What == ObservedLeaseless || e.What == ObservedCrashed || e.What == ObservedBadToken || e.What == ObservedToldLost || e.What == ObservedUnfollowed || e.What == ObservedRequestLost || e.What == ObservedSaidEnded) && e.Client == "":
			return fmt.Sprintf("observed %s without a client", e.What)
		case (e.What == ObservedConnected || e.What == ObservedLeader || e.What == ObservedLeaderless) && e.Member == "":
			return fmt.Sprintf("observed %s without a member", e.What)
		case e.What == ObservedBadToken && (e.Token == 0 || e.Key == "" || e.KeyRevision < 0 || e.KeyRevision == e.Token):
			return fmt.Sprintf("observed bad-token: token %d, key %q and key_revision %d do not describe a mismatch", e.Token, e.Key, e.KeyRevision)
		case e.What == ObservedRunError && e.Error == "":
			return "observed run-error without an error"
		case (e.What == ObservedStalled || e.What == ObservedStarved || e.What == ObservedLeaderless) && (e.StalledFrom < 0 || e.StalledFrom >= e.Time):
			return fmt.Sprintf("observed %s: stalled_from %d is not before the event's time %d", e.What, e.StalledFrom, e.Time)
		}
		return ""
	case Final:
		if e.Value == nil {
			return "final without a value"
		}
		return ""
	}
	return fmt.Sprintf("unknown event type %q", e.Type)
}

func (v *validator) invoke(e Event, line int) string {
	switch {
	case e.Client == "":
		return "invoke without a client"
	case !slices.Contains(knownOps, e.Op):
		return fmt.Sprintf("unknown operation %q (operations: %v)", e.Op, knownOps)
	case e.ID <= 0:
		return fmt.Sprintf("invoke with id %d: ids are positive", e.ID)
	case v.done[e.ID] || v.open[e.ID] != (openOp{}):
		return fmt.Sprintf("operation id %d used twice", e.ID)
	case e.Deadline != 0 && (e.Op != Acquire || e.Deadline < e.Time):
		return fmt.Sprintf("invoke of %s with deadline %d: only an acquire has one, at or after its call (%d)", e.Op, e.Deadline, e.Time)
	}
	if id, busy := v.busy[e.Client]; busy {
		prev := v.open[id]
		return fmt.Sprintf("client %s invokes %s (id %d) while its %s (id %d, line %d) is still open: a client runs one operation at a time",
			e.Client, e.Op, e.ID, prev.op, id, prev.line)
	}
	v.open[e.ID] = openOp{client: e.Client, op: e.Op, line: line}
	v.busy[e.Client] = e.ID
	return ""
}

func (v *validator) complete(e Event) string {
	inv, ok := v.open[e.ID]
	switch {
	case !ok && v.done[e.ID]:
		return fmt.Sprintf("operation %d completed twice", e.ID)
	case !ok:
		return fmt.Sprintf("%s of operation %d comes before its invocation", e.Type, e.ID)
	case inv.client != e.Client || inv.op != e.Op:
		return fmt.Sprintf("%s of operation %d names %s %s, but it was invoked as %s %s (line %d)",
			e.Type, e.ID, e.Client, e.Op, inv.client, inv.op, inv.line)
	case e.Type == Ok && e.Op == CS && e.Value == nil:
		return fmt.Sprintf("ok critical section %d of %s has no read value: it cannot be judged", e.ID, e.Client)
	case e.Type == Ok && e.Op == CS && e.Accepted == nil:
		return fmt.Sprintf("ok critical section %d of %s does not say whether its write was accepted: it cannot be judged", e.ID, e.Client)
	}
	delete(v.open, e.ID)
	delete(v.busy, e.Client)
	v.done[e.ID] = true
	return ""
}

func (v *validator) fault(e Event) string {
	if e.Fault == "" {
		return fmt.Sprintf("%s without a fault name", e.Type)
	}
	if e.Spec != nil && !slices.Contains(FaultKinds(), e.Spec.Kind) {
		return fmt.Sprintf("%s: unknown fault kind %q", e.Type, e.Spec.Kind)
	}
	if e.Type == FaultStart {
		if v.faults[e.ID] || v.ended[e.ID] {
			return fmt.Sprintf("fault id %d started twice", e.ID)
		}
		v.faults[e.ID] = true
		return ""
	}
	if !v.faults[e.ID] {
		return fmt.Sprintf("fault %d ends before it starts", e.ID)
	}
	delete(v.faults, e.ID)
	v.ended[e.ID] = true
	return ""
}

// checkHeader returns what is wrong with a header's values, or "".
func checkHeader(h Header) string {
	switch h.Expect {
	case "", "PASS", "FAIL", "ANY":
	default:
		return fmt.Sprintf("expect %q is none of PASS, FAIL and ANY", h.Expect)
	}
	if h.Members < 0 {
		return fmt.Sprintf("negative members %d", h.Members)
	}
	if err := headerNames(h); err != nil {
		return err.Error()
	}
	if m := h.Minimum; m != nil && (m.Grants < 0 || m.Sections < 0 || m.Accepted < 0 || m.Releases < 0 ||
		m.Clients < 0 || m.RegrantWithin < 0) {
		return fmt.Sprintf("a negative minimum: %+v", *m)
	}
	return ""
}

// eventNames checks the names an event carries that become words of a
// report's pages.
func eventNames(e Event) error {
	if e.Client != "" {
		if err := CheckName("client", e.Client); err != nil {
			return err
		}
	}
	if e.Member != "" {
		if err := CheckName("member", e.Member); err != nil {
			return err
		}
	}
	if e.Lock != "" {
		return CheckLockName(e.Lock)
	}
	return nil
}

// headerNames checks the names a header carries: they become paths and
// words of a report's pages.
func headerNames(h Header) error {
	if h.Scenario != "" {
		if err := CheckName("scenario", h.Scenario); err != nil {
			return err
		}
	}
	if h.Resource != "" {
		if err := CheckName("resource", h.Resource); err != nil {
			return err
		}
	}
	if h.Lock != "" {
		return CheckLockName(h.Lock)
	}
	return nil
}
