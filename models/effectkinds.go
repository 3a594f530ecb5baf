package models

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
)

// leaseEndedDuring: client's lease ended on the server inside a
// history.FaultWindow of the fault kind on subject (the client itself, or
// a member).
func leaseEndedDuring(client, subject string, kind history.FaultKind, what string) effect {
	return effect{
		name: fmt.Sprintf("%s's lease ended on the server while %s", client, what),
		missing: func(tl timeline) string {
			var gone []int64
			for _, l := range tl.losses {
				if l.Client == client {
					gone = append(gone, l.Gone)
				}
			}
			return tl.during(kind, subject, gone, fmt.Sprintf("no lease of %s ended", client))
		},
	}
}

// grantedDuring: client was granted the lock while a fault of kind held on
// other (the double-holder setting: other still believes it holds).
func grantedDuring(client string, kind history.FaultKind, other, what string) effect {
	return effect{
		name: fmt.Sprintf("%s was granted the lock while %s", client, what),
		missing: func(tl timeline) string {
			var granted []int64
			for _, g := range tl.grants(client) {
				granted = append(granted, g.Return)
			}
			return tl.during(kind, other, granted, fmt.Sprintf("no grant to %s", client))
		},
	}
}

// releaseTookEffectUnanswered: the server showed client's release had
// taken effect while the client still had no answer: the release then
// ended without one (ambiguous: info), or with one a retry of the
// client's own learned later on a new connection. Either way the client
// was left to decide what a release it never heard answered did.
func releaseTookEffectUnanswered(client string) effect {
	return effect{
		name: fmt.Sprintf("%s's release took effect on the server while %s had no answer", client, client),
		missing: func(tl timeline) string {
			for _, o := range tl.observed {
				if o.What != history.ObservedReleased || o.Client != client {
					continue
				}
				for _, op := range tl.releases(client) {
					if op.Call <= o.Time && (op.Type == history.Info || o.Time < op.Return) {
						return ""
					}
				}
				return fmt.Sprintf("%s's release had its answer before the server was seen to take it, at %s", client, at(o.Time))
			}
			return fmt.Sprintf("the server was never seen to take %s's release unanswered", client)
		},
	}
}

// acquireTookEffectUnanswered: the server showed the key client's acquire
// wrote while the client still had no answer, and that acquire then ended
// without a grant (failed, or unknown).
func acquireTookEffectUnanswered(client string) effect {
	return effect{
		name: fmt.Sprintf("%s's acquire wrote its key on the server and %s never heard so", client, client),
		missing: func(tl timeline) string {
			seen, op, ok := tl.writtenUnanswered(client)
			switch {
			case !ok:
				return fmt.Sprintf("the server was never seen to take %s's acquire unanswered", client)
			case op == nil:
				return fmt.Sprintf("no acquire of %s was under way when its key was seen at %s", client, at(seen))
			case op.Type == history.Ok:
				return fmt.Sprintf("%s's acquire at %s was granted all the same", client, at(seen))
			}
			return ""
		},
		// A lock whose client rides out the lost answer — it asks again on
		// a new connection by itself and learns the outcome — is granted
		// all the same: its key holds the lock for a client that knows it,
		// never for nobody, and the lesson is not its to learn.
		moot: func(tl timeline) string {
			_, op, ok := tl.writtenUnanswered(client)
			if !ok || op == nil || op.Type != history.Ok {
				return ""
			}
			return fmt.Sprintf("%s's acquire whose answer the link lost was granted all the same, at %s: its "+
				"client rode out the lost answer (it asked again on a new connection and learned the outcome), so "+
				"no key is left holding the lock for nobody", client, at(op.Return))
		},
	}
}

// writtenUnanswered finds when the server first showed the key of an
// acquire of client's (false: never), and the acquire under way then (nil:
// none was).
func (tl timeline) writtenUnanswered(client string) (seen int64, acquire *history.Operation, ok bool) {
	for _, o := range tl.observed {
		if o.What != history.ObservedAcquireWritten || o.Client != client {
			continue
		}
		for i, op := range tl.all {
			if op.Op == history.Acquire && op.Client == client && op.Call <= o.Time && op.Return >= o.Time {
				return o.Time, &tl.all[i], true
			}
		}
		return o.Time, nil, true
	}
	return 0, nil, false
}

// regrantedBeforeRetry: after its unanswered release, client was granted
// again on the same lease, and waiter was queued, before client released
// anything else (the retry).
func regrantedBeforeRetry(client, waiter string) effect {
	return effect{
		name: fmt.Sprintf("%s was granted again on the same lease, with %s queued, before it retried the release", client, waiter),
		missing: func(tl timeline) string {
			grants := tl.grants(client)
			if len(grants) < 2 {
				return fmt.Sprintf("%s was granted %d time(s)", client, len(grants))
			}
			first, again := grants[0], grants[1]
			if !sameReach(first, again) {
				return fmt.Sprintf("%s's second grant rests on lease %x, its first on %x", client, again.Lease, first.Lease)
			}
			queued, ok := tl.queuedAt(waiter)
			if !ok || queued < again.Return {
				return fmt.Sprintf("%s was not seen queued behind %s's second grant", waiter, client)
			}
			for _, op := range tl.releases(client) {
				if op.Call > queued {
					return ""
				}
			}
			return fmt.Sprintf("%s released nothing after %s queued", client, waiter)
		},
		// A lock that takes a new lease for every grant (etcdctl lock: one
		// session per grant) never holds two grants on one lease, so a
		// retried release cannot name the newer one's key: the lesson is
		// not its to learn. Both grants' leases must be known and alive
		// when granted, and differ.
		moot: func(tl timeline) string {
			grants := tl.grants(client)
			if len(grants) < 2 || grants[0].Lease == 0 || grants[1].Lease == 0 || sameReach(grants[0], grants[1]) {
				return ""
			}
			return fmt.Sprintf("it took a new lease for %s's second grant (%x, the first on %x): a release retried "+
				"by key name cannot reach a newer grant of the same session", client, grants[1].Lease, grants[0].Lease)
		},
	}
}

// lateReleaseWhileHeld: late's release was sent while holder held the
// lock (after its grant, before its release) and waiter was queued.
func lateReleaseWhileHeld(late, holder, waiter string) effect {
	return effect{
		name: fmt.Sprintf("%s's late release was sent while %s held the lock and %s waited", late, holder, waiter),
		missing: func(tl timeline) string {
			queued, ok := tl.queuedAt(waiter)
			if !ok {
				return fmt.Sprintf("%s was never seen queued", waiter)
			}
			for _, g := range tl.grants(holder) {
				end := int64(history.Infinity)
				for _, op := range tl.releases(holder) {
					if op.Call >= g.Return {
						end = op.Call
						break
					}
				}
				for _, op := range tl.releases(late) {
					if op.Call > g.Return && op.Call > queued && op.Call < end {
						return ""
					}
				}
			}
			return fmt.Sprintf("no release of %s's was sent while %s held the lock with %s queued", late, holder, waiter)
		},
	}
}

// cutOff finds the first fault of kind and the clients of the member it
// took away; missing says why there are none.
func (tl timeline) cutOff(kind history.FaultKind) (w history.FaultWindow, clients []string, missing string) {
	ws := tl.faultWindows(kind, "")
	if len(ws) == 0 {
		return w, nil, fmt.Sprintf("no %s fault", kind)
	}
	w = ws[0]
	clients = tl.clientsOf(w.Member())
	if len(clients) == 0 {
		return w, nil, fmt.Sprintf("no client talks to %s", w.Member())
	}
	return w, clients, ""
}

// leaseless reports whether client held no lease at t by the history's
// evidence: a lease of its own had ended before t, and none it was
// granted is known to have been alive at t — a lock that takes a lease
// for each try and gives it up when the try fails, between two tries.
func (tl timeline) leaseless(client string, t int64) bool {
	endedBefore := false
	for _, l := range tl.losses {
		if l.Client != client {
			continue
		}
		if l.Gone < t {
			endedBefore = true
		} else if len(l.Renewals) == 0 || l.Renewals[0] <= t {
			return false // alive at t (or its birth is not known)
		}
	}
	for _, op := range tl.all {
		if op.Client == client && op.Op == history.Acquire && op.Type == history.Ok && op.Lease != 0 && op.Return <= t &&
			!slices.ContainsFunc(tl.losses, func(l history.Loss) bool { return l.Lease == op.Lease && l.Gone < t }) {
			return false // a grant's lease, not ended by t
		}
	}
	return endedBefore
}

// cutOffLeasesEnded: every client of the member a fault of kind took away
// that held a lease lost one on the server while the fault held (a client
// that held none — see leaseless — has none to lose, and at least one must
// have held one); what says what became of the member ("isolated").
func cutOffLeasesEnded(kind history.FaultKind, what string) effect {
	return effect{
		name: fmt.Sprintf("the member's clients lost their leases on the server while it was %s", what),
		missing: func(tl timeline) string {
			w, cut, missing := tl.cutOff(kind)
			if missing != "" {
				return missing
			}
			var kept, leased []string
			for _, c := range cut {
				if tl.leaseless(c, w.Start) {
					continue // nothing to lose: it takes a lease per try, and had none
				}
				leased = append(leased, c)
				if !slices.ContainsFunc(tl.losses, func(l history.Loss) bool { return l.Client == c && w.Within(l.Gone) }) {
					kept = append(kept, c)
				}
			}
			if len(leased) == 0 {
				return fmt.Sprintf("no client of %s held a lease when it was %s at %s", w.Member(), what, at(w.Start))
			}
			if len(kept) > 0 {
				return fmt.Sprintf("%s (on %s) kept its lease from %s to %s", strings.Join(kept, ", "), w.Member(), at(w.Start), at(w.End))
			}
			return ""
		},
		// A lock that takes a lease for each try and gives it up when the
		// try fails holds none between tries: if the fault found every
		// client of the member so, none had a lease to lose.
		moot: func(tl timeline) string {
			w, cut, missing := tl.cutOff(kind)
			if missing != "" || slices.ContainsFunc(cut, func(c string) bool { return !tl.leaseless(c, w.Start) }) {
				return ""
			}
			return fmt.Sprintf("no client of %s (%s) held a lease when it was %s at %s: the lock takes a lease for each "+
				"try and gives it up when the try fails, and the fault found them between tries", w.Member(),
				strings.Join(cut, ", "), what, at(w.Start))
		},
	}
}

// othersGranted: while a fault of kind held, a client of another member was
// granted the lock — under a leader other than the member taken away, if
// newLeader. what says what became of the member ("down").
func othersGranted(kind history.FaultKind, what string, newLeader bool) effect {
	name := "the rest of the cluster granted the lock while the member was " + what
	if newLeader {
		name = "a new leader was elected and the lock was granted under it while the old leader was down"
	}
	return effect{
		name: name,
		missing: func(tl timeline) string {
			ws := tl.faultWindows(kind, "")
			if len(ws) == 0 {
				return fmt.Sprintf("no %s fault", kind)
			}
			w := ws[0]
			from := w.Start
			if newLeader {
				from = -1
				for _, o := range tl.observed {
					if o.What == history.ObservedLeader && o.Member != w.Member() && w.Within(o.Time) {
						from = o.Time
						break
					}
				}
				if from < 0 {
					return fmt.Sprintf("no leader other than %s was seen between %s and %s", w.Member(), at(w.Start), at(w.End))
				}
			}
			for _, g := range tl.grants("") {
				if tl.members[g.Client] != w.Member() && g.Return >= from && g.Return <= w.End {
					return ""
				}
			}
			return fmt.Sprintf("no client of another member than %s was granted between %s and %s", w.Member(), at(from), at(w.End))
		},
	}
}

// rejoined: after a fault of kind ended, every client of the member it took
// away was granted the lock again.
func rejoined(kind history.FaultKind) effect {
	return effect{
		name: "after the fault was undone, the member's clients were granted the lock again",
		missing: func(tl timeline) string {
			w, cut, missing := tl.cutOff(kind)
			if missing != "" {
				return missing
			}
			var absent []string
			for _, c := range cut {
				if !slices.ContainsFunc(tl.grants(c), func(g history.Operation) bool { return g.Return > w.End }) {
					absent = append(absent, c)
				}
			}
			if len(absent) > 0 {
				return fmt.Sprintf("%s (on %s) was not granted after %s", strings.Join(absent, ", "), w.Member(), at(w.End))
			}
			return ""
		},
	}
}

// contended: at least half the grants were contested — when the lock was
// granted, another client's acquire was waiting too — so the lock had to
// choose between clients, not just hand itself to one at a time. (Whether
// it chose fairly is not this effect's question.)
func contended() effect {
	return effect{
		name: "most grants were contested by another waiting client",
		missing: func(tl timeline) string {
			grants := tl.grants("")
			if len(grants) == 0 {
				return "no grant"
			}
			contested := 0
			for _, g := range grants {
				if slices.ContainsFunc(tl.all, func(o history.Operation) bool {
					return o.Op == history.Acquire && o.Client != g.Client && o.Call < g.Return && o.Return > g.Return
				}) {
					contested++
				}
			}
			if 2*contested < len(grants) {
				return fmt.Sprintf("%d of %d grants were contested", contested, len(grants))
			}
			return ""
		},
	}
}

// heldPastTTL: some holder held the lock for longer than ttl — from its
// grant to its release call — while another client waited for it.
func heldPastTTL(ttl time.Duration) effect {
	return effect{
		name: fmt.Sprintf("a holder held the lock longer than its lease's TTL (%v) while another client waited", ttl),
		missing: func(tl timeline) string {
			longest := time.Duration(0)
			for _, g := range tl.grants("") {
				end := tl.lastEvent
				for _, r := range tl.releases(g.Client) {
					if r.Call > g.Return {
						end = r.Call
						break
					}
				}
				held := time.Duration(end - g.Return)
				longest = max(longest, held)
				past := g.Return + int64(ttl)
				if held > ttl && slices.ContainsFunc(tl.all, func(o history.Operation) bool {
					return o.Op == history.Acquire && o.Client != g.Client && o.Call < past && o.Return > past
				}) {
					return ""
				}
			}
			return fmt.Sprintf("no hold past %v had a waiter (the longest hold lasted %s)", ttl, longest.Round(time.Millisecond))
		},
	}
}

// blips lists the faults of kind (a cut, or held answers) on client's link
// that lasted less than ttl.
func (tl timeline) blips(client string, ttl time.Duration, kind history.FaultKind) []history.FaultWindow {
	var out []history.FaultWindow
	for _, w := range tl.faultWindows(kind, client) {
		if !w.Open && w.End-w.Start < int64(ttl) {
			out = append(out, w)
		}
	}
	return out
}

// blipKind is the fault a blip effect is about — a cut (the default, for
// a header that names none) or held answers — and how its name says it.
// noun names one such fault in what a missing effect says.
func blipKind(client string, kind history.FaultKind) (k history.FaultKind, what, noun string) {
	if kind == history.FaultHoldAnswers {
		return kind, fmt.Sprintf("%s's answers were held from its keep-alive", client), "hold of the answers"
	}
	return history.FaultCutClient, fmt.Sprintf("%s's link was cut", client), "cut"
}

// blippedHolding: a cut of client's link shorter than ttl came while
// client held the lock, and client held on for ttl after the link came
// back (its next release began that late, or never).
func blippedHolding(client string, ttl time.Duration, kind history.FaultKind) effect {
	kind, what, noun := blipKind(client, kind)
	return effect{
		name: fmt.Sprintf("%s for less than a TTL (%v) while it held the lock, and it held on for a TTL after", what, ttl),
		missing: func(tl timeline) string {
			blips := tl.blips(client, ttl, kind)
			if len(blips) == 0 {
				return fmt.Sprintf("no %s of %s's link shorter than %v", noun, client, ttl)
			}
			for _, w := range blips {
				for _, g := range tl.grants(client) {
					if g.Return > w.Start {
						continue
					}
					end := tl.lastEvent
					for _, r := range tl.releases(client) {
						if r.Call > g.Return {
							end = r.Call
							break
						}
					}
					if end >= w.End+int64(ttl) {
						return ""
					}
				}
			}
			return fmt.Sprintf("%s did not hold the lock from before a short %s of its link to a TTL after it", client, noun)
		},
	}
}

// blippedWaiting: a cut of client's link shorter than ttl came while
// client's acquire waited, and the acquire was still waiting after it.
func blippedWaiting(client string, ttl time.Duration, kind history.FaultKind) effect {
	kind, what, noun := blipKind(client, kind)
	return effect{
		name: fmt.Sprintf("%s for less than a TTL (%v) while it waited for the lock", what, ttl),
		missing: func(tl timeline) string {
			blips := tl.blips(client, ttl, kind)
			if len(blips) == 0 {
				return fmt.Sprintf("no %s of %s's link shorter than %v", noun, client, ttl)
			}
			for _, w := range blips {
				for _, op := range tl.all {
					if op.Op == history.Acquire && op.Client == client && op.Call <= w.Start && op.Answered > w.End {
						return ""
					}
				}
			}
			return fmt.Sprintf("no acquire of %s waited across a short %s of its link", client, noun)
		},
	}
}

// allFaultsApplied: the history has fault windows and every one of them
// was applied and undone without an error.
func allFaultsApplied() effect {
	return effect{
		name: "every fault of the schedule was applied and undone",
		missing: func(tl timeline) string {
			if len(tl.faults) == 0 {
				return "no fault was applied"
			}
			for _, w := range tl.faults {
				if w.Err != "" {
					return fmt.Sprintf("%s at %s: %s", w.Name(), at(w.Start), w.Err)
				}
			}
			return ""
		},
	}
}

// crashedAt is when client was first seen crashing.
func (tl timeline) crashedAt(client string) (int64, bool) {
	return tl.seen(history.ObservedCrashed, client)
}

// crashedHolding: client crashed while it held the lock: a grant of its had
// returned, and no release of it had been sent.
func crashedHolding(client string) effect {
	return effect{
		name: fmt.Sprintf("%s crashed while it held the lock", client),
		missing: func(tl timeline) string {
			crash, ok := tl.crashedAt(client)
			if !ok {
				return fmt.Sprintf("%s never crashed", client)
			}
			for _, g := range tl.grants(client) {
				if g.Return > crash {
					continue
				}
				released := slices.ContainsFunc(tl.releases(client), func(op history.Operation) bool {
					return op.Call >= g.Return && op.Call <= crash
				})
				if !released {
					return ""
				}
			}
			return fmt.Sprintf("%s held nothing when it crashed at %s", client, at(crash))
		},
	}
}

// crashedPaused: client crashed while a pause of it held, stopped where
// what says.
func crashedPaused(client, what string) effect {
	return effect{
		name: fmt.Sprintf("%s crashed while stopped %s", client, what),
		missing: func(tl timeline) string {
			crash, ok := tl.crashedAt(client)
			if !ok {
				return fmt.Sprintf("%s never crashed", client)
			}
			for _, w := range tl.faultWindows(history.FaultPauseClient, client) {
				if w.Err == "" && w.Start <= crash && crash <= w.End {
					return ""
				}
			}
			return fmt.Sprintf("no pause of %s held when it crashed at %s", client, at(crash))
		},
	}
}

// waitedOutLease: waiter, seen queued before crashed crashed, was granted
// in that same wait once crashed's lease had ended: the lock passed on
// with the lease, nothing else freed it.
func waitedOutLease(waiter, crashed string) effect {
	return effect{
		name: fmt.Sprintf("%s, queued before %s crashed, was granted once %s's lease ended", waiter, crashed, crashed),
		missing: func(tl timeline) string {
			crash, ok := tl.crashedAt(crashed)
			if !ok {
				return fmt.Sprintf("%s never crashed", crashed)
			}
			queued, ok := tl.queuedAt(waiter)
			if !ok || queued > crash {
				return fmt.Sprintf("%s was not seen queued before %s crashed at %s", waiter, crashed, at(crash))
			}
			var loss *history.Loss
			for _, l := range tl.losses {
				if l.Client == crashed && l.Gone >= crash {
					loss = &l
					break
				}
			}
			if loss == nil {
				return fmt.Sprintf("no lease of %s ended after it crashed at %s", crashed, at(crash))
			}
			for _, g := range tl.grants(waiter) {
				if g.Call <= queued && g.Return >= loss.AliveUntil {
					return ""
				}
			}
			return fmt.Sprintf("the acquire %s was queued in did not end in a grant after %s", waiter, at(loss.AliveUntil))
		},
	}
}

// sameReach reports whether a release retried by name can reach again,
// a client's grant after first: the two rest on one lease (a session's
// key, named after it), or name one key (a store where every grant writes
// the lock's own key, as Redis's do).
func sameReach(first, again history.Operation) bool {
	return first.Lease != 0 && first.Lease == again.Lease || first.Key != "" && first.Key == again.Key
}
