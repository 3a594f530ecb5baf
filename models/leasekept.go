package models

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
)

// CheckLeaseKept checks that a lock keeps its holder's lease alive for as
// long as the holder holds — and that there is a lease at all: a grant
// whose key rests on none (history.ObservedLeaseless: no expiry, no
// session) FAILs it. It FAILs when the server ended a grant's lease
// after the grant returned and before its client began to release it (or
// by the end of the history), while nothing excused it. Three things do:
// a fault open at some moment from the acquire's call to the loss (or in
// the lease's TTL after the fault ended: a client reconnecting after a
// fault may be granted before its keep-alives flow again, on a lease the
// fault starved); a stall of the lab's own process in that time (see
// history.ObservedStalled); and a keep-alive the holder's client sent for
// the lease within one TTL of its last sighting alive (history.Loss.Renewed:
// the lock did its part, and the link or a server too slow to answer in
// time lost the lease). A holder that is alive, connected and merely slow
// must not lose its lock behind its back: a lock that lets its lease lapse
// under a long critical section (a TTL set once and never renewed, Redis'
// SET NX PX) hands the lock to the next client while the first still
// works, whatever the resource does about it.
func CheckLeaseKept(ops []history.Operation, events []history.Event) Verdict {
	v := Verdict{Check: "lease-kept", Operations: grants(ops)}
	if leaseless(&v, ops, events) {
		return v
	}
	renewed := 0
	for _, h := range heldLosses(ops, events) {
		switch h.excuse {
		case byFault, byUnanswered, byStall, byOutlived:
			continue
		case byRenewal:
			renewed++
			continue
		}
		v.Result, v.Evidence = Fail, append(evidence(h.grant), describeLoss(h.loss))
		switch {
		case h.loss.RevokedAt > 0:
			v.Explanation = fmt.Sprintf("%s's own client revoked the lease it held the lock on, at %s, %v into its "+
				"hold and before %s began to release the lock: the lock ended its holder's lease, and the lock was free "+
				"for the next client while %s still worked under it.", h.grant.Client, time.Duration(h.loss.RevokedAt),
				time.Duration(h.loss.RevokedAt-h.grant.Return), h.grant.Client, h.grant.Client)
			return v
		case h.late != nil:
			v.Explanation = lateExplanation(h)
			return v
		case h.blip != nil:
			v.Explanation = blipExplanation(h)
			return v
		}
		v.Explanation = fmt.Sprintf("The server ended %s's lease %v into its hold, before %s began to release the lock, "+
			"and nothing excuses it: no fault was open, the lab never stood still from the acquire to the loss, and %s. "+
			"The lock let a live, connected holder's lease lapse — a lease set once and never renewed, say — so the "+
			"lock was free for the next client while %s still worked under it.",
			h.grant.Client, time.Duration(h.loss.Gone-h.grant.Return), h.grant.Client, lastRenewal(h.loss), h.grant.Client)
		return v
	}
	if v.Operations == 0 {
		v.Result, v.Explanation = NotApplicable, "The history has no grant."
		return v
	}
	v.Result = Pass
	v.Explanation = fmt.Sprintf("No lease of the %d grants ended while its holder held it, except where a fault or a "+
		"stall of the lab explains it.", v.Operations)
	if renewed > 0 {
		v.Explanation += fmt.Sprintf(" %d ended though the holder's client had sent it a keep-alive within one TTL of "+
			"its last sighting alive: the lock kept renewing, and the link or a server slow under load did not take the "+
			"renewal in time.", renewed)
	}
	return v
}

// excuse is what explains a holder's lost lease, if anything does.
type excuse int

const (
	unexcused  excuse = iota
	byFault           // a fault was open (or had just healed)
	byStall           // the lab's own process stood still
	byRenewal         // the client had renewed it in time
	byOutlived        // the server kept it alive too long after its last renewal: the server's time stood still
	// byUnanswered: a fault held the holder's link too briefly to starve
	// the lease, yet its client heard no answer to its keep-alives for a
	// TTL across it (see unansweredBlip)
	byUnanswered
)

// heldLoss is a grant whose lease the server ended while its holder held
// it, and what excuses that.
type heldLoss struct {
	grant  history.Operation
	loss   history.Loss
	excuse excuse
	// aside, for a loss a fault excused, is what excuses it once the
	// faults that cannot have reached its client are set aside (see
	// environmental).
	aside excuse
	// blip, for an unexcused loss, is a fault that held the holder's link
	// in that time but too briefly to starve the lease (nil: none).
	blip *span
	// late, for an unexcused loss, is the keep-alive a slow link of the
	// holder's delivered after the lease had ended (nil: none).
	late *late
}

// heldLosses lists the grants whose lease the server ended after the grant
// returned and before its client began to release it (or by the end of the
// history), in the order of their calls.
func heldLosses(ops []history.Operation, events []history.Event) []heldLoss {
	losses := history.LeaseLosses(events)
	if len(losses) == 0 {
		return nil
	}
	excused, members := excuses(events), connections(events)
	sorted := slices.Clone(ops)
	slices.SortStableFunc(sorted, func(x, y history.Operation) int { return cmp64(x.Call, y.Call) })
	stale := staleReleases(sorted)
	var out []heldLoss
	for i, g := range sorted {
		if g.Op != history.Acquire || g.Type != history.Ok {
			continue
		}
		l, ok := history.LossOf(g, losses)
		if !ok || l.Gone < g.Return || l.Gone > releaseBegun(sorted[i+1:], g.Client, stale) {
			continue // the lease outlived the hold, or was gone before the grant returned (validity's to judge)
		}
		// Only what can have reached the holder excuses its lapse: another
		// client's cut link, or a member it never talked to killed, cannot
		// have starved its lease (see reaches).
		h := heldLoss{grant: g, loss: l, excuse: excuseOf(reaching(excused, g.Client, members), g.Client, g.Call, l)}
		if h.excuse == byFault {
			h.aside = aside(excused, members, g.Client, g.Call, l)
		}
		if h.excuse == unexcused {
			h.late = lateKeepAlive(excused, g.Client, g.Call, l)
			for _, sp := range excused {
				if sp.link == g.Client && sp.delay == 0 && excusedBetween([]span{sp}, g.Call, l.Gone, l.TTL, true) {
					h.blip = &sp
				}
			}
		}
		out = append(out, h)
	}
	return out
}

// excuseOf says what explains the end of client's lease l, of what
// happened from the moment from (the acquire's call) on.
func excuseOf(excused []span, client string, from int64, l history.Loss) excuse {
	switch {
	case l.RevokedAt > 0:
		return unexcused // its own client ended it: no fault or machine did
	case excusedBetween(starving(excused, client, l), from, l.Gone, l.TTL, true):
		return byFault
	case unansweredBlip(excused, client, from, l) != nil, unheard(excused, from, l) > 0:
		return byUnanswered
	case excusedBetween(excused, from, l.Gone, l.TTL, false):
		return byStall
	case outlived(excused, client, from, l) > 0:
		return byOutlived
	case lateKeepAlive(excused, client, from, l) != nil:
		return unexcused
	case renewedThrough(excused, client, from, l) && !heldRenewal(excused, client, l):
		return byRenewal
	}
	return unexcused
}

// blipExplanation says why a brief fault on the holder's link does not
// excuse its lost lease: when the client last renewed before it, when the
// link came back, and what it sent after.
func blipExplanation(h heldLoss) string {
	c, l, b := h.grant.Client, h.loss, h.blip
	before, _ := l.RenewedBefore(b.from)
	after := "it sent none after the link came back"
	var sent []string
	for _, r := range l.Renewals {
		if r >= b.to {
			sent = append(sent, at(r))
		}
	}
	if len(sent) > 0 {
		after = "after the link came back it sent keep-alives at " + strings.Join(sent, ", ") +
			", none within a TTL of the lease's last sighting alive at " + at(l.AliveUntil)
	}
	return fmt.Sprintf("The server ended %s's lease %v into its hold, before %s began to release the lock. A fault held "+
		"%s's link from %s to %s, but too briefly to starve the lease: %s had last renewed it at %s, so the lease "+
		"(TTL %v) was still alive when the link came back, with time to renew it. %s did not: %s. The lock stopped "+
		"renewing its lease after a transient fault, and the lock was free for the next client while %s still held it.",
		c, time.Duration(l.Gone-h.grant.Return), c, c, at(b.from), at(b.to), c, at(before), time.Duration(l.TTL),
		c, after, c)
}

// grants counts the history's grants.
func grants(ops []history.Operation) int {
	n := 0
	for _, op := range ops {
		if op.Op == history.Acquire && op.Type == history.Ok {
			n++
		}
	}
	return n
}

// lastRenewal says what the history knows of the lost lease's last
// keep-alive, for an explanation.
func lastRenewal(l history.Loss) string {
	switch {
	case l.TTL == 0:
		return "the history does not say what TTL the lease had, so no keep-alive can excuse it"
	case l.RenewedAt == 0:
		return "its client sent the lease no keep-alive the lab saw"
	}
	return fmt.Sprintf("its client's last keep-alive for the lease, at %v, came more than its TTL of %v before "+
		"the lease was last seen alive", time.Duration(l.RenewedAt), time.Duration(l.TTL))
}

// releaseBegun is the call of client's first release in later (sorted by
// call) that names the grant it holds — answered or not, refused or not:
// from then on the client no longer counts on the grant. math.MaxInt64 if
// it never began one.
func releaseBegun(later []history.Operation, client string, stale map[int]bool) int64 {
	for _, op := range later {
		if op.Client == client && op.Op == history.Release && !op.Synthetic && !stale[op.ID] {
			return op.Call
		}
		if op.Client == client && op.Op == history.Acquire {
			break // a new acquire without a release: the old grant was given up
		}
	}
	return math.MaxInt64
}

// span is a stretch of the run clock; a fault's excuse reaches past its end
// (see excusedBetween). link, for a fault that only held one client's
// link for a while (cut-client, lose-answer, closed; hold-answers), names
// that client: such a fault excuses that client's lost lease only if it
// held the link long enough to starve the lease (see starving) — a
// hold of the answers alone never does.
type span struct {
	from, to int64
	fault    bool
	link     string
	// delay, for a delay-client of link, is its delay each way: a slow
	// link, not a held one (see lateKeepAlive).
	delay int64
	// oneWay, for a hold-answers of link, says only its answers were
	// held: its keep-alives reached the server and renewed the lease.
	oneWay bool
	// window is the fault's window; nil for a stall.
	window *history.FaultWindow
}

// excuses lists the stretches in which a lease may lapse through no fault
// of the lock: every fault window (one never closed lasts to the end) and
// every stall of the lab's process.
func excuses(events []history.Event) []span {
	var out []span
	for _, w := range history.FaultWindows(events) {
		sp := span{from: w.Start, to: w.Until(), fault: true, window: &w}
		switch k := w.Spec.Kind; {
		case !w.Open && (k == history.FaultCutClient || k == history.FaultLoseAnswer || k == history.FaultLoseRequest):
			sp.link = w.Spec.Client
		case k == history.FaultDelayClient && w.Spec.Delay > 0:
			sp.link, sp.delay = w.Spec.Client, w.Spec.Delay
		case k == history.FaultHoldAnswers:
			sp.link, sp.oneWay = w.Spec.Client, true
		}
		out = append(out, sp)
	}
	for _, e := range events {
		if e.Type == history.Observed && e.What == history.ObservedStalled {
			out = append(out, span{from: e.StalledFrom, to: e.Time})
		}
	}
	return out
}

// starving keeps, of the excuses, those that may have starved client's
// lease l: every one, but a fault that only held client's own link for a
// while (a blip) counts only if the link was held at least a TTL past the
// last keep-alive client sent before it — had it been held less, the lease
// was still alive when the link came back, with time left for the
// keep-alives the client sent then (the history lists them) to renew it.
// Without the lease's TTL or keep-alives, the history cannot tell: the
// fault excuses, as any fault does.
func starving(excused []span, client string, l history.Loss) []span {
	return slices.DeleteFunc(slices.Clone(excused), func(s span) bool {
		if s.link != client || client == "" || l.TTL <= 0 {
			return false
		}
		if s.oneWay {
			// Its keep-alives still arrived: held answers cannot starve
			// a lease on the server, only a lock that gives up on them.
			return true
		}
		if s.delay > 0 {
			// A slow link delays keep-alives, it does not stop them: what
			// the lease came to is the keep-alives' arithmetic.
			return len(l.Renewals) > 0
		}
		before, ok := l.RenewedBefore(s.from)
		return ok && s.to-before < l.TTL-l.TTL/renewWithin
	})
}

// renewWithin: a cut link that gave back a lease with less than a
// renewWithin-th of its TTL left starved it all the same — no renewer,
// whatever its period, can be held to renew in that time (a cut of 0.98 s
// after the last keep-alive, on a 1 s lease, left it 20 ms).
const renewWithin = 10

// unansweredBlip is a fault that held client's own link too briefly to
// starve its lease l (see starving), from the moment from on, across which
// the client still heard no answer to its keep-alives for a TTL or more
// (history.Loss.Unanswered): its keep-alives sent before the fault were
// answered late, or the one held by the fault was answered late after it.
// From where the client stood its lease may have ended, and a renewer
// that gives the lease up then (etcd's client does, a TTL after its last
// answer) is right to: the fault was no blip for it, through the link's
// and the server's slowness, not the lock's. nil if there is none.
func unansweredBlip(excused []span, client string, from int64, l history.Loss) *span {
	for _, s := range excused {
		if s.link != client || client == "" || s.delay != 0 || l.TTL <= 0 ||
			!excusedBetween([]span{s}, from, l.Gone, l.TTL, true) {
			continue
		}
		if gap, ok := l.Unanswered(s.from, s.to); ok && int64(gap) >= l.TTL {
			return &s
		}
	}
	return nil
}

// unheard is how long l's client went without an answer to the
// keep-alives it went on sending — its last answer (after from) to its
// last keep-alive, at least half a TTL on, with no answer in between —
// when that was a TTL or more and no fault that can reach it (excused is
// what reaches it) overlapped that time: the server, alive and keeping the
// lease, answered too slowly for the client to know, and a renewer that
// gives the lease up a TTL after its last answer (etcd's client does) is
// right to. A busy machine's doing, not the lock's — a lock that stops
// renewing sends nothing, and one that gives up at its first unanswered
// keep-alive stops asking before half a TTL. Zero if there is none.
func unheard(excused []span, from int64, l history.Loss) int64 {
	if l.TTL <= 0 || l.RenewedAt == 0 {
		return 0
	}
	last := int64(-1)
	for _, a := range l.KeptAlive {
		if a >= from && a < l.RenewedAt {
			last = a
		}
	}
	if last < 0 || l.RenewedAt-last < l.TTL/2 || excusedBetween(excused, last, l.Gone, 0, true) {
		return 0
	}
	next := l.Gone
	for _, a := range l.KeptAlive {
		if a > last {
			next = a
			break
		}
	}
	if next-last < l.TTL {
		return 0
	}
	return next - last
}

// heldRenewal reports whether l's last keep-alive was sent while a fault
// held client's own link. Such a keep-alive is no evidence that the lock
// kept renewing: either the link delivered it when it came back, and the
// lease then lived a TTL past that (it lapsed later, so the lock sent
// nothing more), or it never reached the server (the client gave up on it,
// and the lease ended within a TTL of the link's return, which a delivered
// keep-alive rules out). Either way the lock sent nothing once the link was
// back. heldLosses asks only when the fault was too brief to starve the
// lease, so the lease was alive then, with time to renew it.
func heldRenewal(excused []span, client string, l history.Loss) bool {
	return slices.ContainsFunc(excused, func(s span) bool {
		return s.link == client && client != "" && s.delay == 0 && l.RenewedAt >= s.from && l.RenewedAt < s.to
	})
}

// excusedBetween reports whether an excuse — a fault if faults, else a
// stall — overlaps [from, to], a fault's reaching shadow past its end: a
// lease the fault kept from being renewed may still lapse that long after
// it ended.
func excusedBetween(excused []span, from, to, shadow int64, faults bool) bool {
	return slices.ContainsFunc(excused, func(s span) bool {
		if s.fault != faults {
			return false
		}
		end := s.to
		if s.fault && end < math.MaxInt64-shadow {
			end += shadow
		}
		return s.from <= to && end >= from
	})
}

// leaseless fails v when a grant of the history rests on no lease on the
// server (history.ObservedLeaseless), and reports whether it did.
func leaseless(v *Verdict, ops []history.Operation, events []history.Event) bool {
	for _, e := range events {
		if e.Type != history.Observed || e.What != history.ObservedLeaseless {
			continue
		}
		v.Result = Fail
		for _, op := range ops {
			if op.Op == history.Acquire && op.Client == e.Client && op.Token == e.Token && op.Type == history.Ok {
				v.Evidence = evidence(op)
				break
			}
		}
		v.Explanation = fmt.Sprintf("%s's grant rests on no lease on the server: its key has no expiry, no session "+
			"owns it. A lease is what frees a lock whose holder died or was cut off for good; without one, such a "+
			"holder keeps the lock for ever, and every waiter behind it waits for nobody.", e.Client)
		return true
	}
	return false
}
