package models

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/history"
)

// CheckToldLost checks the contract's promise about Grant.Lost: once the
// server has ended the lease of a grant its holder still holds, the
// grant's Lost closes within history.LostGrace — the holder's one way of
// learning that it must stop working under the lock. It FAILs a grant that
// came with a Lost the lab follows (history.Operation.Tells) whose lease
// ended while it was held, and whose Lost had not closed
// (history.ObservedToldLost) history.LostGrace later, when the history
// still ran then, the lab still followed it (history.ObservedUnfollowed)
// and the holder had not begun to release it. A grant with no Lost (the
// lock cannot tell: allowed), a holder that crashed, or a stall of the
// lab's own process in that time, is not judged; nor is a grant the
// history, the lab or the holder left before its time was up. N/A when no
// grant was judged.
func CheckToldLost(ops []history.Operation, events []history.Event) Verdict {
	v := Verdict{Check: "told-lost"}
	// A grant with no token (a lock that gives none) is known by its
	// client alone: the first event after its return is its own.
	told, unfollowed := map[string][]int64{}, map[string][]int64{}
	crashed := map[string][]int64{}
	var end int64
	for _, e := range events {
		end = max(end, e.Time)
		if e.Type != history.Observed {
			continue
		}
		switch e.What {
		case history.ObservedToldLost:
			told[grantKey(e.Client, e.Token)] = append(told[grantKey(e.Client, e.Token)], e.Time)
		case history.ObservedUnfollowed:
			unfollowed[grantKey(e.Client, e.Token)] = append(unfollowed[grantKey(e.Client, e.Token)], e.Time)
		case history.ObservedCrashed:
			crashed[e.Client] = append(crashed[e.Client], e.Time)
		}
	}
	excused := excuses(events)
	grace := int64(history.LostGrace)
	for _, h := range heldLosses(ops, events) {
		g, need := h.grant, h.loss.Gone+grace
		if !g.Tells || crashedBetween(crashed[g.Client], g.Return, need) {
			continue
		}
		at, ok := firstFrom(told[grantKey(g.Client, g.Token)], g.Return)
		stopped, dropped := firstFrom(unfollowed[grantKey(g.Client, g.Token)], g.Return)
		switch {
		case ok && at <= need:
			v.Operations++ // told in time
			continue
		case !ok && end < need, excusedBetween(excused, h.loss.Gone, need, 0, false):
			continue // the history ended first, or the lab stood still
		case !ok && dropped && stopped < need:
			continue // the lab replaced the Locker before the lock had all its time
		case !ok && releasedBy(ops, g, need):
			continue
		}
		v.Operations++
		v.Result, v.Evidence = Fail, append(evidence(g), describeLoss(h.loss))
		when := fmt.Sprintf("had not closed %v later, when the history ended", time.Duration(end-h.loss.Gone).Round(time.Millisecond))
		if ok {
			when = fmt.Sprintf("closed only %v later", time.Duration(at-h.loss.Gone).Round(time.Millisecond))
		}
		v.Explanation = fmt.Sprintf("The server ended %s's lease %v into its hold, and the Grant.Lost of %s's grant %s "+
			"(a lock has %v). Lost is how a holder learns that its lease is gone and it must stop: a lock that does not "+
			"close it lets its holder work on, believing it holds, while the next client is granted the lock.",
			g.Client, time.Duration(h.loss.Gone-g.Return).Round(time.Millisecond), g.Client, when, history.LostGrace)
		return v
	}
	if v.Operations == 0 {
		v.Result, v.Explanation = NotApplicable, "No grant whose lock can tell (Grant.Lost) lost its lease while held "+
			"with the history, the lab and its holder there to see whether Lost closed in time."
		return v
	}
	v.Result = Pass
	v.Explanation = fmt.Sprintf("Every grant whose lease ended while held had its Grant.Lost closed within %v (%d "+
		"grants).", history.LostGrace, v.Operations)
	return v
}

func grantKey(client string, token int64) string { return fmt.Sprintf("%s/%d", client, token) }

// firstFrom is the first of times, in order, at or after from.
func firstFrom(times []int64, from int64) (int64, bool) {
	for _, t := range times {
		if t >= from {
			return t, true
		}
	}
	return 0, false
}

// crashedBetween reports whether a crash of times lies in [from, to].
func crashedBetween(times []int64, from, to int64) bool {
	for _, t := range times {
		if t >= from && t <= to {
			return true
		}
	}
	return false
}

// releasedBy reports whether g's client began a release at or before t,
// after g.
func releasedBy(ops []history.Operation, g history.Operation, t int64) bool {
	for _, op := range ops {
		if op.Client == g.Client && op.Op == history.Release && !op.Synthetic && op.Call >= g.Return && op.Call <= t {
			return true
		}
	}
	return false
}
