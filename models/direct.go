package models

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/locklab/locklab/history"
)

// CheckTokens checks that fencing tokens grow with real time: a grant that
// completed before another was even asked for carries a smaller token, and no
// two grants share one. (Grants whose intervals overlap may complete in either
// order; only real-time order binds.) It also fails a grant seen to break
// lock.Grant's contract (events: observed bad-token), whose token is not the
// create revision of its key.
func CheckTokens(ops []history.Operation, events []history.Event) Verdict {
	grants := select_(ops, func(op history.Operation) bool {
		return op.Op == history.Acquire && op.Type == history.Ok && op.Token != 0
	})
	v := Verdict{Check: "tokens", Operations: len(grants)}
	if !slices.ContainsFunc(ops, func(op history.Operation) bool { return op.Op == history.Acquire && op.Type == history.Ok }) {
		v.Result, v.Explanation = NotApplicable, "No grant yet: token order is not judged until the lock grants."
		return v
	}
	if len(grants) == 0 {
		v.Result, v.Explanation = NotApplicable, "No grant carries a fencing token: this lock gives none, so token order was not checked."
		return v
	}
	if bad, g, ok := badToken(grants, events); ok {
		v.Result, v.Evidence = Fail, append(evidence(g), "server: "+bad.String())
		v.Explanation = bad.String() + ". lock.Grant's Token must be the create revision of its Key: a Guard built " +
			"from this grant compares against nothing that exists, so every write it guards is refused, and the " +
			"lab cannot tell from the server whether the grant still stands. A lock whose token is something " +
			"else (a counter of its own) must leave Key empty."
		return v
	}
	seen := map[int64]history.Operation{}
	for _, g := range grants {
		prev, dup := seen[g.Token]
		switch {
		case dup && prev.Client != g.Client:
			v.Result, v.Evidence = Fail, evidence(prev, g)
			v.Explanation = fmt.Sprintf("Two grants carry the same fencing token %d: a fenced resource could not tell their writes apart.", g.Token)
			return v
		case dup:
			// The same client may be granted its own key again (an acquire
			// retried after an ambiguous failure adopts it), but not after
			// it released that grant: a new grant needs a new token.
			if r, ok := releasedBetween(ops, g.Client, g.Token, prev.Return, g.Call); ok {
				v.Result, v.Evidence = Fail, evidence(prev, r, g)
				v.Explanation = fmt.Sprintf("%s was granted token %d again after it had released it: a fenced resource could not tell "+
					"the new grant's writes from the old one's.", g.Client, g.Token)
				return v
			}
		}
		seen[g.Token] = g
	}
	if a, b, ok := realTimeInversion(grants); ok {
		v.Result, v.Evidence = Fail, evidence(a, b)
		v.Explanation = fmt.Sprintf("Fencing tokens went backwards: %s's grant (token %d) completed before %s asked for the lock, "+
			"yet %s got the smaller token %d. A fenced resource would reject the newer holder's writes.",
			a.Client, a.Token, b.Client, b.Client, b.Token)
		return v
	}
	if len(seen) == 1 && len(grants) > 1 {
		v.Result = NotApplicable
		v.Explanation = fmt.Sprintf("All %d grants carry the one token %d, each to %s with no release between them: "+
			"token order was not tested.", len(grants), grants[0].Token, grants[0].Client)
		return v
	}
	v.Result = Pass
	v.Explanation = fmt.Sprintf("All %d grants' fencing tokens (%d distinct) grow in real-time grant order, and no token "+
		"is shared by two clients or granted again after its release.", len(grants), len(seen))
	return v
}

// badToken finds the first grant the lab saw break lock.Grant's contract.
func badToken(grants []history.Operation, events []history.Event) (history.BadToken, history.Operation, bool) {
	for _, e := range events {
		if e.Type != history.Observed || e.What != history.ObservedBadToken {
			continue
		}
		for _, g := range grants {
			if g.Client == e.Client && g.Token == e.Token {
				return history.BadTokenOf(e), g, true
			}
		}
	}
	return history.BadToken{}, history.Operation{}, false
}

// releasedBetween finds a release of token by client that returned ok
// within [from, to].
func releasedBetween(ops []history.Operation, client string, token, from, to int64) (history.Operation, bool) {
	for _, op := range ops {
		if op.Op == history.Release && op.Type == history.Ok && !op.Synthetic && op.Client == client &&
			op.Token == token && op.Return >= from && op.Return <= to {
			return op, true
		}
	}
	return history.Operation{}, false
}

// CheckStaleWrites checks that no write was accepted with a token smaller than
// that of a write accepted before it (in real time): the property fencing
// exists to give. It compares the writes themselves — from the moment each
// critical section sent its write to its completion — not the whole sections,
// so a stale write that lands after a newer one is caught even when the two
// sections overlap (histories that predate write times fall back to the
// section's call).
func CheckStaleWrites(ops []history.Operation) Verdict {
	var writes []history.Operation
	for _, op := range ops {
		if op.Op == history.CS && op.Type == history.Ok && op.Token != 0 && (op.Accepted == nil || *op.Accepted) {
			if op.WriteAt != 0 {
				op.Call = op.WriteAt
			}
			writes = append(writes, op)
		}
	}
	v := Verdict{Check: "stale-writes", Operations: len(writes)}
	if len(writes) == 0 {
		v.Result, v.Explanation = NotApplicable, "No accepted write carries a fencing token, so stale writes were not checked."
		return v
	}
	if a, b, ok := realTimeInversion(writes); ok {
		v.Result, v.Evidence = Fail, []string{describeWrite(a), describeWrite(b)}
		v.Explanation = fmt.Sprintf("A stale write got through: %s's write with token %d was accepted after %s's write with the newer token %d "+
			"had been accepted. The writer's lock had already passed on; a fenced resource would have rejected it.",
			b.Client, b.Token, a.Client, a.Token)
		return v
	}
	v.Result = Pass
	v.Explanation = fmt.Sprintf("No accepted write carries a token smaller than one accepted before it (%d writes).", len(writes))
	return v
}

// describeWrite is describe with the write's own span.
func describeWrite(op history.Operation) string {
	return fmt.Sprintf("%s, write sent at %v", describeSpan(op), time.Duration(op.Call))
}

// realTimeInversion finds a, b with a completed before b was called and
// a.Token > b.Token.
func realTimeInversion(ops []history.Operation) (a, b history.Operation, ok bool) {
	byCall := slices.Clone(ops)
	slices.SortStableFunc(byCall, func(x, y history.Operation) int { return cmp64(x.Call, y.Call) })
	byReturn := slices.Clone(ops)
	slices.SortStableFunc(byReturn, func(x, y history.Operation) int { return cmp64(x.Return, y.Return) })
	var best history.Operation // largest token among those returned so far
	have, i := false, 0
	for _, op := range byCall {
		for ; i < len(byReturn) && byReturn[i].Return < op.Call; i++ {
			if !have || byReturn[i].Token > best.Token {
				best, have = byReturn[i], true
			}
		}
		if have && best.Token > op.Token {
			return best, op, true
		}
	}
	return a, b, false
}

// window is one grant's span: from the grant's completion to the holder's
// release call, or to the last moment its lease was known alive, whichever is
// first.
type window struct {
	grant      history.Operation
	start, end int64
}

// windows builds a window per ok grant. With losses (validity), a window
// also ends where the grant's lease was last known alive, and a synthetic
// release — the history's stand-in for a client that ended holding — closes
// nothing: such a holder holds until its lease ends or the history does.
// Without (belief), only releases close windows, synthetic ones included.
// In both, a release the lock refused, or one naming an older grant than
// the client's latest (see staleReleases), closes nothing — unless seen
// holds it: the server showed it taking effect, whatever the lock said.
func windows(ops []history.Operation, losses []history.Loss, validity bool, seen map[int]bool) []window {
	sorted := slices.Clone(ops)
	slices.SortStableFunc(sorted, func(x, y history.Operation) int { return cmp64(x.Call, y.Call) })
	stale := staleReleases(sorted)
	var out []window
	open := map[string]int{} // client → index in out of its open window
	for _, op := range sorted {
		switch {
		case stale[op.ID]:
			// A retried release of an older grant ends nothing the client
			// holds now.
		case op.Op == history.Acquire && op.Type == history.Ok:
			end := int64(math.MaxInt64)
			if validity {
				end = leaseEnd(op, losses)
			}
			open[op.Client] = len(out)
			out = append(out, window{grant: op, start: op.Return, end: end})
		case op.Op == history.Release && op.Type == history.Fail && !seen[op.ID]:
			// A release the lock refused ("not held") ended nothing: if
			// the grant had ended, its lease's end or an earlier release
			// closed the window; if something else ended it — another
			// release deleting its key — that is the fault to find.
		case op.Op == history.Release && !(validity && op.Synthetic):
			if i, ok := open[op.Client]; ok {
				out[i].end = min(out[i].end, op.Call)
				delete(open, op.Client)
			}
		}
	}
	return out
}

// staleReleases finds, among ops sorted by call, the releases that name an
// older grant than their client's latest (by token): a retry of a release
// after an ambiguous failure. They end no hold, in belief or in validity. A
// release without a token (older files) names no grant and is not stale.
func staleReleases(sorted []history.Operation) map[int]bool {
	latest := map[string]int64{} // client → token of its latest grant
	stale := map[int]bool{}
	for _, op := range sorted {
		switch {
		case op.Op == history.Acquire && op.Type != history.Fail && op.Token != 0:
			latest[op.Client] = op.Token
		case op.Op == history.Release && op.Token != 0 && latest[op.Client] != 0 && op.Token != latest[op.Client]:
			stale[op.ID] = true
		}
	}
	return stale
}

// releasesSeen finds the releases the server showed taking effect while
// they were under way (history.ObservedReleased of their client, as when
// the lab lost a release's answer), whatever the lock answered: such a
// release ended its grant, even one the lock called "not held".
func releasesSeen(ops []history.Operation, events []history.Event) map[int]bool {
	seen := map[int]bool{}
	for _, e := range events {
		if e.Type != history.Observed || e.What != history.ObservedReleased {
			continue
		}
		for _, op := range ops {
			if op.Op == history.Release && op.Client == e.Client && op.Call <= e.Time && e.Time <= op.Return {
				seen[op.ID] = true
			}
		}
	}
	return seen
}

// leaseEnd is the last moment a grant's lease is known to have been alive
// (math.MaxInt64 if the server never ended it).
func leaseEnd(grant history.Operation, losses []history.Loss) int64 {
	if l, ok := history.LossOf(grant, losses); ok {
		return l.AliveUntil
	}
	return math.MaxInt64
}

// firstOverlap finds two windows of different clients that overlap.
func firstOverlap(ws []window) (a, b window, ok bool) {
	ws = slices.DeleteFunc(slices.Clone(ws), func(w window) bool { return w.end <= w.start })
	slices.SortStableFunc(ws, func(x, y window) int { return cmp64(x.start, y.start) })
	var reach window // the window reaching furthest so far
	for i, w := range ws {
		if i > 0 && w.start < reach.end && w.grant.Client != reach.grant.Client {
			return reach, w, true
		}
		if i == 0 || w.end > reach.end {
			reach = w
		}
	}
	return a, b, false
}

// CheckValidity checks that holder validity windows never overlap: each runs
// from a grant to its release, or to the server-side end of the lease the
// grant rests on. A client that ends the history holding holds until its
// lease ends or the history does. It also fails a grant whose lease the
// server had already ended before the acquire was even asked for. A lock
// that grants while another holder is still valid is broken whatever the
// resource does.
func CheckValidity(ops []history.Operation, events []history.Event) Verdict {
	losses := history.LeaseLosses(events)
	ws := windows(ops, losses, true, releasesSeen(ops, events))
	v := Verdict{Check: "validity", Operations: len(ws)}
	if len(ws) == 0 {
		v.Result, v.Explanation = NotApplicable, "The history has no grant."
		return v
	}
	for _, w := range ws {
		if l, ok := history.LossOf(w.grant, losses); ok && w.grant.Lease != 0 && l.Gone < w.grant.Call {
			v.Result, v.Evidence = Fail, append(evidence(w.grant), describeLoss(l))
			v.Explanation = fmt.Sprintf("The lock granted %s on a lease the server had already ended: lease %x was gone "+
				"%v before %s even asked for the lock. A grant resting on nothing protects nothing.",
				w.grant.Client, l.Lease, time.Duration(w.grant.Call-l.Gone), w.grant.Client)
			return v
		}
	}
	a, b, overlap := firstOverlap(ws)
	for _, e := range events {
		if e.Type != history.Observed || e.What != history.ObservedGrantGone {
			continue
		}
		for _, w := range ws {
			if w.grant.Client != e.Client || w.grant.Token != e.Token {
				continue
			}
			if overlap && b.grant.ID == w.grant.ID {
				// Granted while another still held the lock, its key was
				// never the lock's (on a majority, say): the overlap is the
				// story, not what freed it.
				continue
			}
			v.Result, v.Evidence = Fail, evidence(w.grant)
			gone := fmt.Sprintf("server: %s's lock key (token %d) was gone at %v, its lease alive, no release of it begun",
				e.Client, e.Token, time.Duration(e.Time))
			if r, ok := olderRelease(ops, w.grant, e.Time); ok {
				v.Evidence = append(v.Evidence, evidence(r)...)
				v.Explanation = fmt.Sprintf("%s's release of an older grant (token %d) freed the lock %s held then (token %d): "+
					"its key was gone from the server once that release returned, its lease still alive, whatever the "+
					"release answered. A release — above all one retried after an ambiguous failure — must end only the "+
					"grant it names; one that deletes the lock's key by name deletes the newer grant's.",
					e.Client, r.Token, e.Client, e.Token)
			} else if k, ok := killedAt(events, e.Time); ok {
				v.Explanation = fmt.Sprintf("%s's lock key was gone from the server once %s, the server that held it, was "+
					"killed: the server that took its place never had the key (its replication had not carried it over), "+
					"and granted the lock again while %s still held it. A lock is only as safe as the copy of its key "+
					"that survives a failover.", e.Client, k, e.Client)
			} else {
				v.Explanation = fmt.Sprintf("Something other than %s freed %s's lock: its key was gone from the server (or "+
					"held another grant's value) while %s held it, had not begun to release it, and its lease was still "+
					"alive. A release must end only the grant it names, and a renewal must extend only the grant it "+
					"names; one that deletes or writes the lock's key by name, whoever's it is, frees a lock that is not "+
					"its own.", e.Client, e.Client, e.Client)
			}
			v.Evidence = append(v.Evidence, gone)
			return v
		}
	}
	if overlap {
		v.Result, v.Evidence = Fail, evidence(a.grant, b.grant)
		why := "had neither released nor lost its lease (on the server)"
		if a.end == math.MaxInt64 {
			why = "never released, and the server never ended its lease"
		}
		v.Explanation = fmt.Sprintf("The lock granted %s while %s still validly held it: %s %s when %s's grant completed, %v after %s's.",
			b.grant.Client, a.grant.Client, a.grant.Client, why, b.grant.Client, time.Duration(b.start-a.start), a.grant.Client)
		return v
	}
	v.Result = Pass
	v.Explanation = fmt.Sprintf("No two of the %d grants were valid at once: each began after the previous holder released or its lease ended on the server.", len(ws))
	return v
}

// killedAt names the member a kill-member fault open at t killed.
func killedAt(events []history.Event, t int64) (string, bool) {
	for _, w := range history.FaultWindows(events) {
		if w.Spec.Kind == history.FaultKillMember && w.Start <= t && t <= w.Until() {
			return w.Spec.Member, true
		}
	}
	return "", false
}

// olderRelease finds the client's own release of another grant than g,
// begun after g was granted and by the time its key was seen gone (at):
// the retried release that freed g.
func olderRelease(ops []history.Operation, g history.Operation, at int64) (history.Operation, bool) {
	for _, op := range ops {
		if op.Op == history.Release && op.Client == g.Client && !op.Synthetic && op.Token != 0 && op.Token != g.Token &&
			op.Call >= g.Return && op.Call <= at {
			return op, true
		}
	}
	return history.Operation{}, false
}

// answerHeld reports whether a fault that cut the client off — on its own
// link, or the isolation of its own member — was open at some moment of the
// acquire and lasted until the lease was gone: the server may then have
// granted the lock while the lease was alive and the answer waited in the
// cut until after the lease lapsed — a grant stale on arrival (the belief
// finding), not proof that the lock granted on an ended lease. Seen with
// correct locks: c2's acquire was answered at once by the server, its link
// was cut 6 ms later, and the answer arrived 1.9 s after (queue); c1's
// acquire committed as its member was isolated, and was answered after the
// heal (ttl-poll).
func answerHeld(op history.Operation, l history.Loss, events []history.Event) bool {
	member := ""
	for _, e := range events {
		if e.Type == history.Observed && e.What == history.ObservedConnected && e.Client == op.Client {
			member = e.Member
		}
	}
	for _, w := range history.FaultWindows(events) {
		if w.Open {
			continue // a fault never undone holds no answer that arrived
		}
		cuts := w.Spec.HoldsClientLink(op.Client) || w.CutsOff(member)
		if cuts && w.Start <= op.Return && w.End >= l.Gone && w.End >= op.Call {
			return true
		}
	}
	return false
}

// others is ops without client's.
func others(ops []history.Operation, client string) []history.Operation {
	return select_(ops, func(op history.Operation) bool { return op.Client != client })
}

// freeWhileAlive reports whether the lock could have been granted to op's
// client while its lease l still lived: some moment between the acquire's
// call and the lease's last sign of life is covered by no other client's
// validity window. If other holders covered all of it, the grant was decided
// after the lease ended, and no held answer excuses it.
func freeWhileAlive(op history.Operation, l history.Loss, others []history.Operation, losses []history.Loss) bool {
	ws := windows(others, losses, true, nil)
	slices.SortFunc(ws, func(a, b window) int { return cmp64(a.start, b.start) })
	reached := op.Call // covered up to here
	for _, w := range ws {
		if w.end <= reached {
			continue
		}
		if w.start > reached {
			return true // a gap before this window
		}
		reached = w.end
		if reached >= l.AliveUntil {
			return false
		}
	}
	return reached < l.AliveUntil
}

// describeLoss renders a lease loss as evidence.
func describeLoss(l history.Loss) string {
	if l.RevokedAt > 0 {
		return fmt.Sprintf("server: %s's lease %x ended, revoked by its own client [alive at %v, revoked at %v, gone at %v]",
			l.Client, l.Lease, time.Duration(l.AliveUntil), time.Duration(l.RevokedAt), time.Duration(l.Gone))
	}
	return fmt.Sprintf("server: %s's lease %x ended [alive at %v, gone at %v]", l.Client, l.Lease,
		time.Duration(l.AliveUntil), time.Duration(l.Gone))
}

// CheckExpiredWaiter checks that no client is granted the lock on a lease
// that ended while it waited: its place in the queue went with the lease
// (the etcd v3.4 client bug Jepsen found, etcd issue 11456). A grant fails
// the check when the server ended the grant's lease after the acquire was
// asked for (the lease was seen alive after the call) and before the acquire
// returned ok. It applies to every history: wherever a lease ends while its
// client waits.
func CheckExpiredWaiter(ops []history.Operation, events []history.Event) Verdict {
	losses := history.LeaseLosses(events)
	v := Verdict{Check: "expired-waiter"}
	for _, op := range ops {
		if op.Op != history.Acquire || op.Type != history.Ok {
			continue
		}
		l, ok := history.LossOf(op, losses)
		if !ok {
			continue
		}
		v.Operations++
		if l.AliveUntil >= op.Call && l.Gone <= op.Return && !(answerHeld(op, l, events) && freeWhileAlive(op, l, others(ops, op.Client), losses)) {
			v.Result, v.Evidence = Fail, append(evidence(op), describeLoss(l))
			v.Explanation = fmt.Sprintf("%s was granted the lock although its lease ended while it waited: the server had "+
				"dropped the lease (and every key on it) %v before the grant returned. A waiter whose session dies must "+
				"be told so, never that it holds the lock.", op.Client, time.Duration(op.Return-l.Gone))
			return v
		}
	}
	if v.Operations == 0 {
		v.Result, v.Explanation = NotApplicable, "No lease of a granted client ended during the history."
		return v
	}
	v.Result = Pass
	v.Explanation = fmt.Sprintf("No client whose lease ended while it waited was told it holds the lock (%d grants on leases that later ended).", v.Operations)
	return v
}
