package models

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
)

// CheckEnvironment tells whether the run's environment, rather than the
// lock, took a holder's or a waiter's lease away (or left its client
// without an answer to its keep-alives until its lock rightly gave the
// lease up, see givenUps), or cut the run short
// (see shortfalls: too little progress, or a step that went otherwise
// than its script, while the lab's own process stood still; min is the
// progress the run had to make, nil for none), or left a waiter with a
// free lock for longer than a hand-off may take only if the time the
// machine was too busy to count is counted (see CheckHandOff): a grant's
// lease ended while its holder held it (or a lease while its client waited, see
// waitLosses), no fault of the schedule that could reach its client
// explains it (see reaches: a fault of another client's link, or of a
// member the client never talked to, does not), and yet the client
// had sent the lease a keep-alive in time (within one TTL of its last
// sighting alive), or the lab's own process stood still meanwhile. That is a
// busy machine's doing — a server too slow to take a renewal in, a process
// starved of CPU — and what follows from it (the next client rightly
// granted, a lost update on an unfenced store) is no evidence against the
// lock. Its result is ERROR when such a lapse or shortfall happened, with
// each one as evidence; PASS when none did; N/A with no grant (and no
// step gone astray while the lab stood still). It is not a
// safety check: Judge reads it (a caught violation that was not expected,
// or too little progress, becomes ERROR), and the runner runs such a
// configuration again.
func CheckEnvironment(ops []history.Operation, events []history.Event, min *history.Minimum) Verdict {
	return checkEnvironment(ops, events, min, "")
}

// checkEnvironment is CheckEnvironment of a run whose schedule may have
// been vacuous (missing: what the scenario claims happens and did not, see
// didNotHappen; "" if it all did): a fault the lab's standing still
// stretched past what the lesson needs is a shortfall of the environment's
// too (see shortfalls).
func checkEnvironment(ops []history.Operation, events []history.Event, min *history.Minimum, missing string) Verdict {
	v := Verdict{Check: "environment", Operations: grants(ops)}
	short, stood, starved := shortfalls(ops, events, min, missing)
	if why := busyHandOff(ops, events, min); why != "" {
		short, starved = append(short, why), false
	}
	if v.Operations == 0 && len(short) == 0 {
		v.Result, v.Explanation = NotApplicable, "The history has no grant."
		return v
	}
	why, evidence := lapses(ops, events)
	v.Evidence = append(v.Evidence, evidence...)
	v.Evidence = append(v.Evidence, stood...)
	if len(why) == 0 && len(short) == 0 {
		v.Result = Pass
		v.Explanation = "No holder's or waiter's lease ended but where a fault of the schedule, or the lock itself, " +
			"explains it."
		return v
	}
	v.Result, v.paceOnly, v.lapsed = Error, starved && len(why) == 0, len(why) > 0
	var said []string
	if len(why) > 0 {
		said = append(said, "let a renewed lease lapse: "+strings.Join(why, "; "))
	}
	if len(short) > 0 {
		said = append(said, "cut the run short: "+strings.Join(short, "; "))
	}
	v.Explanation = "The environment " + strings.Join(said, "; and ") + ". The machine " +
		"was too slow for the lease's TTL or the script's deadlines (a lease lapsed though renewed, another client was " +
		"then rightly granted, a waiter rightly told its session expired, a step ran out of time), so what followed is " +
		"no evidence against the lock: run again on a quieter machine, or with a longer TTL (--ttl)."
	return v
}

// lapses says, one reason each, the leases of the history the environment
// ended — a holder's, a waiter's or an idle client's, renewed in time or
// lost while the lab stood still — and the waits it cut short, with their
// evidence.
func lapses(ops []history.Operation, events []history.Event) (why, shown []string) {
	for _, h := range heldLosses(ops, events) {
		switch h.environmental() {
		case byRenewal:
			why = append(why, fmt.Sprintf("%s's lease ended %v into its hold although its client had sent it a "+
				"keep-alive %v before it was last seen alive (TTL %v)", h.grant.Client,
				time.Duration(h.loss.Gone-h.grant.Return), time.Duration(h.loss.AliveUntil-h.loss.RenewedAt),
				time.Duration(h.loss.TTL)))
		case byStall:
			why = append(why, fmt.Sprintf("%s's lease ended %v into its hold while the lab's own process stood still",
				h.grant.Client, time.Duration(h.loss.Gone-h.grant.Return)))
		case byOutlived:
			why = append(why, fmt.Sprintf("%s's lease ended %v into its hold, %s", h.grant.Client,
				time.Duration(h.loss.Gone-h.grant.Return), outlivedWhy(events, h)))
		case byUnanswered:
			why = append(why, fmt.Sprintf("%s's lease ended %v into its hold: %s", h.grant.Client,
				time.Duration(h.loss.Gone-h.grant.Return), unansweredWhy(events, h)))
		default:
			continue
		}
		shown = append(shown, append(evidence(h.grant), describeLoss(h.loss))...)
	}
	for _, w := range waitLosses(ops, events) {
		what := ", and the lab's own process stood still meanwhile"
		switch w.environmental() {
		case byOutlived:
			what = ", " + outlivedWhy(events, w)
		case byRenewal:
			what = fmt.Sprintf(" although its client had sent it a keep-alive %v before it was last seen alive (TTL %v)",
				time.Duration(w.loss.AliveUntil-w.loss.RenewedAt), time.Duration(w.loss.TTL))
		case byUnanswered:
			what = ": " + unansweredWhy(events, w)
		}
		why = append(why, fmt.Sprintf("%s's lease ended while it waited for the lock%s", w.grant.Client, what))
		shown = append(shown, append(evidence(w.grant), describeLoss(w.loss))...)
	}
	for _, l := range idleLosses(ops, events) {
		what := fmt.Sprintf("although its client had sent it a keep-alive %v before it was last seen alive (TTL %v)",
			time.Duration(l.loss.AliveUntil-l.loss.RenewedAt), time.Duration(l.loss.TTL))
		switch l.environmental() {
		case byStall:
			what = "while the lab's own process stood still"
		case byOutlived:
			what = outlivedWhy(events, l)
		case byUnanswered:
			what = unansweredWhy(events, l)
		}
		why = append(why, fmt.Sprintf("%s's lease ended while %s held nothing and asked for nothing, %s",
			l.loss.Client, l.loss.Client, what))
		shown = append(shown, describeLoss(l.loss))
	}
	for _, g := range givenUps(events) {
		why = append(why, g.why())
		shown = append(shown, g.evidence)
	}
	return why, shown
}

// untimed makes a passing environment verdict of a run documented to FAIL
// an ERROR when the machine was too busy to count for most of the run
// (see starvedRun): a lock that is to be caught needs the lesson's timing
// — a waiter's deadline passing while another's session lives on — and
// the machine decided that timing, so a run that caught nothing is no
// evidence that the bug is gone; it is run again. A check that caught the
// lock stays caught (paceOnly). A run documented to PASS keeps its PASS:
// a correct lock must pass whatever the timing.
func untimed(v Verdict, events []history.Event, expect string) Verdict {
	if v.Result != Pass || expect != string(ExpectFail) {
		return v
	}
	busy := starvedRun(events)
	if busy == "" {
		return v
	}
	v.Result, v.paceOnly, v.untimed = Error, true, true
	v.Explanation = "The environment decided the run's timing: " + busy + ". A run documented to FAIL that caught " +
		"nothing on it is no evidence that the lock is right: run again on a quieter machine."
	return v
}

// Unjudged says, in the first sentence of the environment's verdict, why
// a result that does not match its expectation (matches false) was the
// environment's rather than the lock's: checks hold an environment ERROR
// (see CheckEnvironment). "" when it matches, or nothing of the
// environment's is recorded. Such a result was not judged: it is neither
// as expected nor a finding against the lock, and a quieter machine, or a
// longer TTL, may judge it.
func Unjudged(matches bool, checks []Verdict) string {
	if matches {
		return ""
	}
	for _, v := range checks {
		if v.Check == "environment" && v.Result == Error {
			why, _, _ := strings.Cut(v.Explanation, ". ")
			return why
		}
	}
	return ""
}

// NotJudged reports whether a result of verdict was not judged: the
// environment kept it from matching (Unjudged), and no check caught the
// lock failing (a FAIL is a finding, however busy the machine).
func NotJudged(verdict Result, matches bool, checks []Verdict) bool {
	return verdict != Fail && Unjudged(matches, checks) != ""
}

// outlivedWhy says how long the server kept h's lease alive past what its
// keep-alives allow (see outlived).
func outlivedWhy(events []history.Event, h heldLoss) string {
	last := lastReached(excuses(events), h.grant.Client, h.grant.Call, h.loss)
	return fmt.Sprintf("yet the server still had it alive %v after the last keep-alive the lab saw reached it (TTL %v): "+
		"the server's own time had stood still", time.Duration(h.loss.AliveUntil-last), time.Duration(h.loss.TTL))
}

// unansweredWhy says how long h's client went without an answer to its
// keep-alives across a fault too brief to starve its lease (see
// unansweredBlip).
func unansweredWhy(events []history.Event, h heldLoss) string {
	excused := reaching(excuses(events), h.grant.Client, connections(events))
	b := unansweredBlip(excused, h.grant.Client, h.grant.Call, h.loss)
	if b == nil {
		return fmt.Sprintf("its client heard no answer to the keep-alives it went on sending for %v (TTL %v), with no "+
			"fault on its way to the server: the server answered too slowly for it to know its lease lived, and giving "+
			"it up was right", round(time.Duration(unheard(excused, h.grant.Call, h.loss))), time.Duration(h.loss.TTL))
	}
	gap, _ := h.loss.Unanswered(b.from, b.to)
	return fmt.Sprintf("its client heard no answer to its keep-alives for %v across a %v fault on its link (TTL %v), "+
		"so from where it stood the lease may have ended and giving it up was right: the link and the server answered "+
		"too slowly for the fault to be the brief one it was meant to be", round(gap), round(time.Duration(b.to-b.from)),
		time.Duration(h.loss.TTL))
}

// waitLosses lists the leases the server ended while their client waited
// in an acquire, renewed in time or while the lab stood still (byRenewal,
// byStall), with that acquire (as grant): the client sent the lease a
// keep-alive after it began to wait, so it was the lease it waited on, and
// within a TTL of its last sighting alive. A waiter's lapse is not the
// lock's either: the lock rightly tells its client the session expired,
// and a script that expected a grant, or a run's progress, comes up short
// through no fault of the lock. An acquire granted on the very lease that
// ended is left out: that grant is the lock's error (expired-waiter).
func waitLosses(ops []history.Operation, events []history.Event) []heldLoss {
	losses := history.LeaseLosses(events)
	if len(losses) == 0 {
		return nil
	}
	excused, members := excuses(events), connections(events)
	var out []heldLoss
	for _, op := range ops {
		if op.Op != history.Acquire || op.Synthetic {
			continue
		}
		end := op.Return
		if op.Type == history.Info && op.Answered != 0 {
			end = op.Answered
		}
		for _, l := range losses {
			if l.Client != op.Client || l.Gone < op.Call || l.Gone > end || l.RenewedAt <= op.Call ||
				(op.Type == history.Ok && l.Lease == op.Lease) {
				continue
			}
			w := heldLoss{grant: op, loss: l, excuse: excuseOf(excused, op.Client, op.Call, l)}
			if w.excuse == byFault {
				w.aside = aside(excused, members, op.Client, op.Call, l)
			}
			if w.environmental() != unexcused {
				out = append(out, w)
			}
		}
	}
	return out
}

// idleLosses lists the leases the server ended while their client held no
// grant and had no operation under way, which the machine let lapse (see
// heldLoss.environmental, once the faults that cannot reach the client are
// set aside): its client renewed it in time, or the lab's own process
// stood still meanwhile, or the server's own time did. A lease that lapsed
// under an idle client sends its next step astray (it asks on a session
// that has ended), and takes with it whatever its client had left on the
// server — a waiter's key that gave up, which the lesson means to stay —
// through no doing of the lock. Each comes as a heldLoss whose grant is
// the stretch the lapse is judged from: the client, and the last TTL
// before the lease was last seen alive. A lease that ended on time, a TTL
// after its client's last keep-alive (history.Loss.EndedOnTime), with
// nothing of the machine's in the way of a next one, is none of these:
// nobody was still renewing it.
func idleLosses(ops []history.Operation, events []history.Event) []heldLoss {
	losses := history.LeaseLosses(events)
	if len(losses) == 0 {
		return nil
	}
	excused, members := excuses(events), connections(events)
	var out []heldLoss
	for _, l := range losses {
		if busyAt(ops, l.Client, l.AliveUntil, l.Gone) {
			continue
		}
		from := max(l.AliveUntil-l.TTL, 0)
		h := heldLoss{grant: history.Operation{Client: l.Client, Call: from}, loss: l, excuse: excuseOf(excused, l.Client, from, l)}
		if h.excuse == byFault {
			h.aside = aside(excused, members, l.Client, from, l)
		}
		switch e := h.environmental(); {
		case e == byRenewal && l.EndedOnTime():
			// Its client stopped renewing, and the server ended it on
			// schedule: no lapse. (A stall that kept the lab's own
			// client from renewing is still the machine's.)
		case e != unexcused:
			out = append(out, h)
		}
	}
	return out
}

// busyAt reports whether client held a grant, or had an operation under
// way, at some moment from from to to.
func busyAt(ops []history.Operation, client string, from, to int64) bool {
	var held *history.Operation
	for i, op := range ops {
		if op.Client != client || op.Synthetic {
			continue
		}
		end := op.Return
		if op.Answered != 0 {
			end = op.Answered
		}
		if op.Call <= to && (end >= from || op.Answered == 0 && op.Type == history.Info) {
			return true
		}
		switch {
		case op.Op == history.Acquire && op.Type == history.Ok && op.Return <= to:
			held = &ops[i]
		case op.Op == history.Release && held != nil && op.Call <= from:
			held = nil
		}
	}
	return held != nil
}
