package models

import (
	"fmt"
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
	var grants, sections, accepted, releases int
	granted := map[string]bool{}
	for _, op := range ops {
		switch {
		case op.Op == history.Acquire && op.Type == history.Ok:
			grants++
			granted[op.Client] = true
		case op.Op == history.Release && op.Type == history.Ok && !op.Synthetic:
			releases++
		case op.Op == history.CS && op.Type == history.Ok:
			sections++
			if op.Accepted != nil && *op.Accepted {
				accepted++
			}
		}
	}
	v.Operations = grants + sections
	var short []string
	if grants < min.Grants {
		short = append(short, fmt.Sprintf("%d of %d grants", grants, min.Grants))
	}
	if sections < min.Sections {
		short = append(short, fmt.Sprintf("%d of %d critical sections completed", sections, min.Sections))
	}
	if accepted < min.Accepted {
		short = append(short, fmt.Sprintf("%d of %d writes accepted by the resource", accepted, min.Accepted))
	}
	if releases < min.Releases {
		short = append(short, fmt.Sprintf("%d of %d releases returned ok", releases, min.Releases))
	}
	if len(granted) < min.Clients {
		short = append(short, fmt.Sprintf("%d of %d clients were ever granted (the others starved)", len(granted), min.Clients))
	}
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
		grants, sections, accepted)
	if min.RegrantWithin > 0 {
		v.Explanation += " The lock granted again after the last fault ended."
	}
	return v
}

// liveness checks that an acquire returned ok within bound after the last
// fault window closed; "" if it did or the history has no fault.
func liveness(ops []history.Operation, events []history.Event, bound int64) (string, []string) {
	var healed int64 = -1
	var fault string
	for _, w := range history.FaultWindows(events) {
		if !w.Open && w.End > healed {
			healed, fault = w.End, w.Name()
		}
	}
	if healed < 0 {
		return "", nil
	}
	var first *history.Operation
	for i, op := range ops {
		if op.Op == history.Acquire && op.Type == history.Ok && op.Return >= healed && (first == nil || op.Return < first.Return) {
			first = &ops[i]
		}
	}
	switch {
	case first == nil:
		return fmt.Sprintf("No grant after the last fault (%s) ended at %v: the lock never recovered within the run "+
			"(it must grant again within %v).", fault, time.Duration(healed), time.Duration(bound)), nil
	case first.Return-healed > bound:
		return fmt.Sprintf("The lock took %v after the last fault (%s) ended to grant again; the scenario allows %v.",
			time.Duration(first.Return-healed), fault, time.Duration(bound)), evidence(*first)
	}
	return "", nil
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
