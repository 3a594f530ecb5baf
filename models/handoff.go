package models

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/history"
)

// stranding is an acquire the lock left waiting while the lock was free
// (see strandedWaiter).
type stranding struct {
	op *history.Operation
	// free is when the lock became free for it: the later of its call, the
	// end of the last grant before (released, or its lease gone) and the
	// settling of the last fault that reached it; until when it stopped
	// waiting.
	free, until int64
	// after is the grant whose end made the lock free; nil if none did.
	after *history.Operation
	// busy is how much of that time the lab's own process stood still
	// (see busySpans).
	busy int64
	// slow is the longest delay each way of a slow link the waiter was on
	// meanwhile (see settledBy); zero if none.
	slow int64
}

// slowSlack is how many of a slow link's one-way delays a hand-off over
// it may take beyond the bound: the release's word reaching the waiter
// (one), its request and the answer granting it (two more), and one to
// spare for a lock that reads once more before it asks.
const slowSlack = 4

// strandedWaiter finds the first acquire that was never granted although
// the lock was free for bound or longer while it waited, counted from the
// run's first grant on, if there was one (see firstGrant) — not counting the
// time the lab's own process stood still (see busySpans): from its call to
// the moment it stopped waiting (its answer, or the history's end), nobody
// else was granted, no grant before it was still held — its release
// answered ok, or its lease ended on the server (a crashed holder's key
// stays until its lease does) — no acquire of another client whose answer
// a fault took may have left a key, and no fault that reaches the waiter
// was under way or had ended less than bound before. A lock that grants
// by a watch hands a free lock over in milliseconds; a poller within its
// interval. Nil if no acquire was left so. unjudged is the first acquire
// that was left so only when the time the lab stood still is counted: it
// was too busy to tell whether the lock stranded it.
func strandedWaiter(ops []history.Operation, events []history.Event, bound int64) (stranded, unjudged *stranding) {
	var last int64
	for _, e := range events {
		last = max(last, e.Time)
	}
	losses := history.LeaseLosses(events)
	windows := history.FaultWindows(events)
	busy := busySpans(events, false)
	conns := connections(events)
	granted := firstGrant(ops)
	for i := range ops {
		op := &ops[i]
		if op.Op != history.Acquire || op.Type == history.Ok || op.Synthetic {
			continue
		}
		until := last
		if op.Answered > 0 {
			until = op.Answered
		}
		if lostOwn(losses, op.Client, op.Call, until) {
			continue // its own lease ended: no grant could come
		}
		free, after, ok := freeFrom(ops, losses, windows, conns, op, until)
		if !ok {
			continue
		}
		settled, slow, ok := settledBy(windows, conns, op.Client, until, bound)
		if !ok {
			continue
		}
		free = max(free, settled, granted)
		within := bound + slowSlack*slow
		if until-free < within {
			continue
		}
		s := &stranding{op: op, free: free, until: until, after: after, busy: busyWithin(busy, free, until), slow: slow}
		if until-free-s.busy >= within {
			return s, nil
		}
		if unjudged == nil {
			unjudged = s
		}
	}
	return nil, unjudged
}

// firstGrant is when the run's first grant returned, zero if none did.
// Until then the store has not shown that it grants at all — a store just
// started (a JVM's first requests take seconds) is no lock's to answer
// for — so no wait is counted before it; in a run that never grants, a
// lock that strands every waiter, every wait counts.
func firstGrant(ops []history.Operation) int64 {
	var first int64
	for _, op := range ops {
		if op.Op == history.Acquire && op.Type == history.Ok && !op.Synthetic && (first == 0 || op.Return < first) {
			first = op.Return
		}
	}
	return first
}

// settledBy is when the faults that reach client and began before until
// had ended bound ago (zero if none did), and the longest delay each way
// of a slow link that reached it meanwhile (zero if none); false if a
// fault that cuts it off was still under way at until. A slow link
// delivers — every message, late — so it excuses no wait: it only makes
// the hand-off over it later by a few of its delays (see slowSlack), even
// while it lasts to the end of the run.
func settledBy(windows []history.FaultWindow, conns map[string]map[string]bool, client string, until, bound int64) (settled, slow int64, ok bool) {
	for _, w := range windows {
		if w.Start >= until || !reaches(w, client, conns[client]) {
			continue
		}
		if w.Spec.Kind == history.FaultDelayClient {
			slow = max(slow, w.Spec.Delay)
			continue
		}
		if w.Open || w.End >= until {
			return 0, 0, false
		}
		settled = max(settled, w.End+bound)
	}
	return settled, slow, true
}

// busySpans are the times the machine was too busy to count, merged and in
// order: the lab's own process stood still (history.ObservedStalled), and,
// with cpus, the CPUs were oversubscribed (history.ObservedStarved). Only
// the first keeps a hand-off from being judged (see strandedWaiter): a
// runner beside other work nearly always has its CPUs oversubscribed, yet
// the lab's wake-ups there come within milliseconds (measured beside four
// busy loops: 40 ms at worst), and a waiter that misses its wake-up must
// stay caught there. The second explains a run's pace (see starvedRun).
func busySpans(events []history.Event, cpus bool) [][2]int64 {
	var spans [][2]int64
	for _, e := range events {
		if e.Type == history.Observed && (e.What == history.ObservedStalled || cpus && e.What == history.ObservedStarved) {
			spans = append(spans, [2]int64{e.StalledFrom, e.Time})
		}
	}
	slices.SortFunc(spans, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	var out [][2]int64
	for _, s := range spans {
		if n := len(out); n > 0 && s[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], s[1])
			continue
		}
		out = append(out, s)
	}
	return out
}

// busyWithin is how much of [from, until] the spans cover.
func busyWithin(spans [][2]int64, from, until int64) int64 {
	var d int64
	for _, s := range spans {
		d += max(min(s[1], until)-max(s[0], from), 0)
	}
	return d
}

// lostOwn reports whether a lease of client's wait ended between from
// and until, taken from it: a lease its client still renewed, ended early
// by the server or the link, or revoked. A lease its client had stopped
// renewing, ending on schedule (see history.Loss.EndedOnTime) — a failed
// try's, left to end (python-etcd3 takes a lease for every try), or one
// the lock let lapse while it waited — was the lock's to give up: its end
// excuses no wait.
func lostOwn(losses []history.Loss, client string, from, until int64) bool {
	for _, l := range losses {
		if l.Client == client && l.Gone >= from && l.Gone <= until && !l.EndedOnTime() {
			return true
		}
	}
	return false
}

// freeFrom is when the lock became free for waiter, who stopped waiting at
// until: its call or the end of the last grant of another client before
// until, whichever is later (after: that grant). False if it never was:
// another client was granted while it waited, a grant was still held at
// until, or another client's acquire whose answer a fault took (its key
// may stand) had not ended since.
func freeFrom(ops []history.Operation, losses []history.Loss, windows []history.FaultWindow,
	conns map[string]map[string]bool, waiter *history.Operation, until int64) (int64, *history.Operation, bool) {
	free := waiter.Call
	var after *history.Operation
	for i := range ops {
		g := &ops[i]
		if g.Op != history.Acquire || g.Client == waiter.Client || g.Call > until {
			continue
		}
		maybe := g.Type == history.Info && answerTaken(windows, conns, g)
		if g.Type != history.Ok && !maybe {
			continue // it failed, or gave up with nothing left (the contract)
		}
		if g.Type == history.Ok && g.Return > waiter.Call {
			return 0, nil, false // someone else was granted while it waited
		}
		end, ok := grantEnd(ops, losses, g, until)
		if !ok {
			return 0, nil, false
		}
		if end > free {
			free, after = end, g
		}
	}
	return free, after, true
}

// answerTaken reports whether a fault that reaches g's client was under way
// while g waited for its answer: the acquire may have taken effect unheard.
func answerTaken(windows []history.FaultWindow, conns map[string]map[string]bool, g *history.Operation) bool {
	heard := g.Answered
	if heard == 0 {
		heard = g.Return
	}
	for _, w := range windows {
		if w.Start <= heard && w.End >= g.Call && reaches(w, g.Client, conns[g.Client]) {
			return true
		}
	}
	return false
}

// grantEnd is when grant g (or an acquire that may have granted) stopped
// holding the lock by until: its client's next release that answered ok,
// or the end of its lease on the server (the grant's own, when the grant
// names it). False if neither came by until.
func grantEnd(ops []history.Operation, losses []history.Loss, g *history.Operation, until int64) (int64, bool) {
	end := int64(-1)
	for _, r := range ops {
		if r.Op == history.Release && r.Client == g.Client && !r.Synthetic && r.Type == history.Ok &&
			r.Call >= g.Call && r.Return <= until {
			end = r.Return
			break
		}
	}
	for _, l := range losses {
		if g.Lease != 0 && l.Lease != 0 && l.Lease != g.Lease {
			continue // another lease of its client's: a failed try's, say
		}
		if l.Client == g.Client && l.Gone >= g.Call && l.Gone <= until && (end < 0 || l.Gone < end) {
			end = l.Gone
		}
	}
	return end, end >= 0
}

// CheckHandOff checks that the lock hands a free lock to a waiter: no
// acquire may be left waiting, and never granted, while the lock was free
// for Minimum.HandOffWithin or longer (see strandedWaiter). A waiter that
// misses its wake-up, or waits behind a key its lock left behind, FAILs,
// with the acquire and the grant whose end freed the lock — evidence
// against the lock, as a safety violation is, that matches no documented
// outcome (a lock that grants nothing fails it in any lesson). N/A without
// a bound or a waiter; UNKNOWN where the waiter was left so only if the
// time the machine was too busy to count is counted.
func CheckHandOff(ops []history.Operation, events []history.Event, min *history.Minimum) Verdict {
	v := Verdict{Check: "hand-off"}
	if min == nil || min.HandOffWithin <= 0 {
		v.Result, v.Explanation = NotApplicable, "The history states no bound on handing a free lock to a waiter."
		return v
	}
	s, unjudged := strandedWaiter(ops, events, min.HandOffWithin)
	if s != nil {
		return handOffVerdict(s, min.HandOffWithin)
	}
	if unjudged != nil {
		v.Result, v.Evidence = Unknown, evidence(*unjudged.op)
		v.Explanation = fmt.Sprintf("%s waited %v for the lock while it was free, and was never granted — but %v of "+
			"that time the lab's own process stood still, and a lab standing still hands a lock over late whatever the "+
			"lock does: not decided. Run it on a quieter machine.", unjudged.op.Client, roundMS(unjudged.until-unjudged.free), roundMS(unjudged.busy))
		return v
	}
	v.Result = Pass
	v.Explanation = fmt.Sprintf("No acquire was left waiting %v or longer, and never granted, while the lock was free.",
		time.Duration(min.HandOffWithin))
	return v
}

// busyHandOff says how the machine, too busy to count, kept the hand-off
// from being judged (CheckHandOff's UNKNOWN); "" if it did not.
func busyHandOff(ops []history.Operation, events []history.Event, min *history.Minimum) string {
	if min == nil || min.HandOffWithin <= 0 {
		return ""
	}
	s, u := strandedWaiter(ops, events, min.HandOffWithin)
	if s != nil || u == nil {
		return ""
	}
	return fmt.Sprintf("%s waited %v for a free lock, %v of it while the lab's own process stood still",
		u.op.Client, roundMS(u.until-u.free), roundMS(u.busy))
}

// handOffVerdict is CheckHandOff's FAIL for a stranded waiter.
func handOffVerdict(s *stranding, bound int64) Verdict {
	v := Verdict{Check: "hand-off", Result: Fail, Evidence: evidence(*s.op)}
	since := "since it asked"
	if s.after != nil {
		since = fmt.Sprintf("after %s's grant (token %d) ended", s.after.Client, s.after.Token)
		v.Evidence = append(v.Evidence, evidence(*s.after)...)
	}
	busy := ""
	if s.busy > 0 {
		busy = fmt.Sprintf(" (%v of it while the lab's own process stood still)", roundMS(s.busy))
	}
	reached, within := "no fault reached "+s.op.Client, time.Duration(bound)
	if s.slow > 0 {
		reached = fmt.Sprintf("no fault cut %s off (its link was slow, every message %v late each way, and delivered)",
			s.op.Client, time.Duration(s.slow))
		within = time.Duration(bound + slowSlack*s.slow)
	}
	v.Explanation = fmt.Sprintf("%s waited %v%s for the lock while it was free — %s nobody held it, nobody else was "+
		"granted and %s — and was never granted (a waiter must be handed a free lock within %v): "+
		"the lock left a waiter waiting for nothing.",
		s.op.Client, roundMS(s.until-s.free), busy, since, reached, within)
	return v
}
