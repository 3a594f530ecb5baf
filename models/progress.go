package models

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
)

// CheckProgress checks that the run did enough to test the lock at all: the
// grants, completed critical sections and accepted writes its scenario
// requires, and — after the last fault ended — a new grant within the stated
// bound (liveness). A lock that grants nothing, or whose every guarded write
// is refused, passes every safety check and has proved nothing: it FAILs
// here. N/A when the history states no minimum.
func CheckProgress(ops []history.Operation, events []history.Event, min *history.Minimum) Verdict {
	v := Verdict{Check: "progress"}
	if min == nil {
		v.Result, v.Explanation = NotApplicable, "The history states no minimum progress."
		return v
	}
	short, counts := shortBy(ops, min)
	v.Operations = counts.grants + counts.sections
	if len(short) > 0 {
		v.Result = Fail
		v.Explanation = "Too little progress: " + strings.Join(short, "; ") + ". A run that exercised this little " +
			"proves nothing about the lock, whatever the other checks say."
		return v
	}
	if min.RegrantWithin > 0 {
		if msg, evidence := liveness(ops, events, min.RegrantWithin); msg != "" {
			v.Result, v.Explanation, v.Evidence = Fail, msg, evidence
			return v
		}
	}
	v.Result = Pass
	v.Explanation = fmt.Sprintf("Enough happened to judge the lock: %d grants, %d critical sections, %d writes accepted.",
		counts.grants, counts.sections, counts.accepted)
	if min.RegrantWithin > 0 {
		v.Explanation += " The lock granted again after the last fault ended."
	}
	return v
}

// done counts what a run achieved, as Minimum states it.
type done struct{ grants, sections, accepted, releases, clients int }

// shortBy says how ops fall short of min, one phrase each (none: they do
// not), with what they did.
func shortBy(ops []history.Operation, min *history.Minimum) ([]string, done) {
	var d done
	granted := map[string]bool{}
	for _, op := range ops {
		switch {
		case op.Op == history.Acquire && op.Type == history.Ok:
			d.grants++
			granted[op.Client] = true
		case op.Op == history.Release && op.Type == history.Ok && !op.Synthetic:
			d.releases++
		case op.Op == history.CS && op.Type == history.Ok:
			d.sections++
			if op.Accepted != nil && *op.Accepted {
				d.accepted++
			}
		}
	}
	d.clients = len(granted)
	var short []string
	if d.grants < min.Grants {
		short = append(short, fmt.Sprintf("%d of %d grants", d.grants, min.Grants))
	}
	if d.sections < min.Sections {
		short = append(short, fmt.Sprintf("%d of %d critical sections completed", d.sections, min.Sections))
	}
	if d.accepted < min.Accepted {
		short = append(short, fmt.Sprintf("%d of %d writes accepted by the resource", d.accepted, min.Accepted))
	}
	if d.releases < min.Releases {
		short = append(short, fmt.Sprintf("%d of %d releases returned ok", d.releases, min.Releases))
	}
	if d.clients < min.Clients {
		short = append(short, fmt.Sprintf("%d of %d clients were ever granted (the others starved)", d.clients, min.Clients))
	}
	return short, d
}

// recovery is how a lock came back after the last fault window of a
// history closed (at healed, fault naming it).
type recovery struct {
	healed int64
	fault  string
	// first is the first grant returned after healed (nil: none).
	first *history.Operation
	// free is when the lock was first free after healed: healed itself, or
	// when the grant held then ended (its release sent, its lease gone).
	// A lock held across the heal is granted again from then on.
	free int64
	// wedged, if not nil, is an acquire that waited longer than the bound
	// after healed while nobody was granted; waited is how long.
	wedged *history.Operation
	waited int64
}

// recoveryOf reads how the lock came back after the last fault; false if the
// history has no fault that ended.
func recoveryOf(ops []history.Operation, events []history.Event, bound int64) (recovery, bool) {
	r := recovery{healed: -1}
	var last int64
	for _, e := range events {
		last = max(last, e.Time)
	}
	for _, w := range history.FaultWindows(events) {
		if !w.Open && w.End > r.healed {
			r.healed, r.fault = w.End, w.Name()
		}
	}
	if r.healed < 0 {
		return r, false
	}
	losses := history.LeaseLosses(events)
	r.free = r.healed
	if g, until := heldAt(ops, losses, "", r.healed); g != nil {
		r.free = max(until, r.healed)
	}
	grantedBy := func(t int64) bool {
		for _, op := range ops {
			if op.Op == history.Acquire && op.Type == history.Ok && op.Return >= r.healed && op.Return <= t {
				return true
			}
		}
		return false
	}
	for i, op := range ops {
		if op.Op != history.Acquire || op.Synthetic {
			continue
		}
		if op.Type == history.Ok && op.Return >= r.healed && (r.first == nil || op.Return < r.first.Return) {
			r.first = &ops[i]
		}
		// It waited until it heard an answer (even "unknown"), or, with
		// none, to the end of the history.
		until := last
		if op.Answered > 0 {
			until = op.Answered
		}
		from := max(op.Call, r.healed)
		waited := until - from
		if r.wedged == nil && waited > bound && !grantedBy(from+bound) && holder(ops, losses, op.Client, from+bound) == "" {
			r.wedged, r.waited = &ops[i], waited
		}
	}
	return r, true
}

// holder is a client other than but that held a grant at t: granted by
// then, not releasing yet, and its lease not ended by then (losses). ""
// if none did. A client waiting while another holds the lock waits
// rightly, however long: the lock is kept for that holder.
func holder(ops []history.Operation, losses []history.Loss, but string, t int64) string {
	if g, _ := heldAt(ops, losses, but, t); g != nil {
		return g.Client
	}
	return ""
}

// heldAt is the grant of a client other than but held at t (see holder),
// and when its hold ended: its release sent or its lease gone, whichever
// came first after t (the history's end, as far as it knows, for one held
// to the end). Nil if none was held.
func heldAt(ops []history.Operation, losses []history.Loss, but string, t int64) (*history.Operation, int64) {
	for i, g := range ops {
		if g.Op != history.Acquire || g.Type != history.Ok || g.Client == but || g.Return > t {
			continue
		}
		until := int64(math.MaxInt64)
		if l, ok := history.LossOf(g, losses); ok {
			if l.Gone <= t {
				continue // its lease had ended: the lock was free
			}
			until = l.Gone
		}
		released := false
		for _, r := range ops {
			if r.Op == history.Release && r.Client == g.Client && r.Call >= g.Return {
				if r.Call <= t {
					released = true
					break
				}
				until = min(until, r.Call)
			}
		}
		if !released {
			return &ops[i], until
		}
	}
	return nil, 0
}

// liveness says, for progress, what is wrong with how the lock granted
// again after the last fault ("" if nothing is, the history has no fault,
// or CheckLiveness FAILs it: a wedge is said once).
func liveness(ops []history.Operation, events []history.Event, bound int64) (string, []string) {
	r, ok := recoveryOf(ops, events, bound)
	switch {
	case !ok || r.wedged != nil:
		return "", nil
	case r.first == nil:
		return fmt.Sprintf("No grant after the last fault (%s) ended at %v: the lock never recovered within the run "+
			"(it must grant again within %v).", r.fault, time.Duration(r.healed), time.Duration(bound)), nil
	case r.first.Return-r.free > bound:
		since := fmt.Sprintf("after the last fault (%s) ended", r.fault)
		if r.free > r.healed {
			since = fmt.Sprintf("after the grant held when the last fault (%s) ended was given up", r.fault)
		}
		return fmt.Sprintf("The lock took %v %s to grant again; the scenario allows %v.",
			time.Duration(r.first.Return-r.free), since, time.Duration(bound)), evidence(*r.first)
	}
	return "", nil
}

// CheckLiveness checks that the lock recovers once faults heal: after the
// last fault of the history ended, no acquire may wait longer than the
// scenario's bound (Minimum.RegrantWithin) while nobody at all is granted
// and nobody holds the lock.
// A lock that keeps the lock, or a place in its queue, for nobody — a key
// whose acquire's answer was lost, left under a session that lives on —
// makes every acquire after it wait: FAIL, with the acquire that waited.
// That is evidence against the lock, as a safety violation is; whether the
// lock granted again soon enough when nobody waited that long is
// progress's to say. N/A without a bound or a fault that ended.
func CheckLiveness(ops []history.Operation, events []history.Event, min *history.Minimum) Verdict {
	v := Verdict{Check: "liveness"}
	if min == nil || min.RegrantWithin <= 0 {
		v.Result, v.Explanation = NotApplicable, "The history states no bound on granting again after a fault."
		return v
	}
	bound := min.RegrantWithin
	r, ok := recoveryOf(ops, events, bound)
	switch {
	case !ok:
		v.Result, v.Explanation = NotApplicable, "No fault of the history ended."
	case r.wedged != nil:
		op := *r.wedged
		v.Result, v.Evidence = Fail, evidence(op)
		v.Explanation = fmt.Sprintf("%s waited %v for the lock after the last fault (%s) ended, and nobody was granted "+
			"in that time (the lock must grant again within %v): the lock was kept for nobody.",
			op.Client, roundMS(r.waited), r.fault, time.Duration(bound))
	case r.first != nil && r.first.Return-r.free <= bound:
		v.Result = Pass
		v.Explanation = fmt.Sprintf("The lock granted again %v after the last fault (%s) ended.",
			roundMS(max(r.first.Return-r.healed, 0)), r.fault)
		if r.free > r.healed {
			v.Explanation = fmt.Sprintf("The lock granted again %v after the grant held when the last fault (%s) "+
				"ended was given up.", roundMS(max(r.first.Return-r.free, 0)), r.fault)
		}
	default:
		v.Result = NotApplicable
		v.Explanation = fmt.Sprintf("No acquire waited longer than %v after the last fault (%s) ended.", time.Duration(bound), r.fault)
	}
	return v
}

// roundMS is ns as a duration, to the millisecond once it is that long.
func roundMS(ns int64) time.Duration {
	d := time.Duration(ns)
	if d >= time.Millisecond {
		d = d.Round(time.Millisecond)
	}
	return d
}

// LostFraction is the share of acknowledged increments (critical sections
// whose write was accepted and confirmed) missing from the resource's final
// value, as Jepsen counts acknowledged writes missing from the final read. A
// stale write rolls the counter back, so the final value, not the largest
// value ever written, is what counts. Nil when the history records no final
// value or no acknowledged increment.
func LostFraction(ops []history.Operation, events []history.Event) *float64 {
	var final *int64
	for _, e := range events {
		if e.Type == history.Final {
			final = e.Value
		}
	}
	acked := 0
	for _, op := range ops {
		if op.Op == history.CS && op.Type == history.Ok && op.Accepted != nil && *op.Accepted {
			acked++
		}
	}
	if final == nil || acked == 0 {
		return nil
	}
	f := max(float64(acked)-float64(*final), 0) / float64(acked)
	return &f
}
