package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// Effect is something a scenario claims happens in every run of it — "c1's
// lease ended while c1 was paused", "a new leader was elected and granted
// the lock" — checked over the run's history alone, so that an offline
// check of the file judges it the same way. A run in which an effect did not
// happen did not exercise what the scenario names (a vacuous schedule): it
// cannot PASS.
type Effect struct {
	// Name says what must happen.
	Name string
	// missing returns "" when the effect is in the history, else what is
	// missing, in a phrase.
	missing func(tl timeline) string
	// moot, if set, returns why the lesson cannot happen to this lock at
	// all, by its design (not by the run's timing), or "".
	moot func(tl timeline) string
}

// EffectResult is one effect's outcome in one run.
type EffectResult struct {
	Name     string `json:"name"`
	Happened bool   `json:"happened"`
	// Missing says what the history lacks when it did not happen.
	Missing string `json:"missing,omitempty"`
	// Moot says why it cannot happen to this lock by the lock's design:
	// the run tested nothing and is skipped, neither PASS nor ERROR.
	Moot string `json:"moot,omitempty"`
}

// CheckEffects judges each of the scenario's effects on one history.
func (s Scenario) CheckEffects(events []history.Event) []EffectResult {
	if len(s.Effects) == 0 {
		return nil
	}
	tl := newTimeline(events)
	out := make([]EffectResult, len(s.Effects))
	for i, ef := range s.Effects {
		m := ef.missing(tl)
		out[i] = EffectResult{Name: ef.Name, Happened: m == "", Missing: m}
		if ef.moot != nil && m != "" {
			out[i].Moot = ef.moot(tl)
		}
	}
	return out
}

// JudgeEffects folds a run's effects into its result: a result other than
// FAIL becomes ERROR when an effect did not happen — the schedule never
// exercised what the scenario names, which is no evidence of safety — and
// a FAIL stays (a violation found is evidence whatever else happened).
// missing says what did not happen ("" if everything did).
func JudgeEffects(result models.Result, effects []EffectResult) (judged models.Result, missing string) {
	missing = Vacuous(effects)
	if missing != "" && result != models.Fail {
		return models.Error, missing
	}
	return result, missing
}

// Moot says why the scenario's lesson cannot happen to the lock at all, or
// "" if it can.
func Moot(effects []EffectResult) string {
	for _, ef := range effects {
		if ef.Moot != "" {
			return "does not apply to this lock: " + ef.Moot
		}
	}
	return ""
}

// Vacuous describes the effects that did not happen, or "" if all did.
func Vacuous(effects []EffectResult) string {
	var missing []string
	for _, ef := range effects {
		if !ef.Happened {
			missing = append(missing, fmt.Sprintf("%s (%s)", ef.Name, ef.Missing))
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return "vacuous schedule: did not happen: " + strings.Join(missing, "; ")
}

// timeline is a history read for effects: who talks to which member, the
// fault windows, the lease losses, the operations and the observations.
type timeline struct {
	members   map[string]string // client → member
	faults    []window
	losses    []history.Loss
	ops       []history.Operation // completed ok, in call order
	all       []history.Operation // every operation, in call order
	observed  []history.Event
	lastEvent int64 // the time of the history's last event
}

// window is one fault, from its start to its end (the history's end if it
// never ended).
type window struct {
	fault      string      // as the history names it: "pause-client c1 at before-write"
	kind       faults.Kind // its first word
	subject    string      // its second word: the client or member it names, if any
	target     string      // what it resolved to ("m2")
	start, end int64
	err        string
}

func newTimeline(events []history.Event) timeline {
	tl := timeline{members: map[string]string{}, losses: history.LeaseLosses(events)}
	open := map[int]int{}
	var last int64
	for _, e := range events {
		last = max(last, e.Time)
		switch e.Type {
		case history.Observed:
			tl.observed = append(tl.observed, e)
			if e.What == history.ObservedConnected {
				tl.members[e.Client] = e.Member
			}
		case history.FaultStart:
			f := strings.Fields(e.Fault)
			w := window{fault: e.Fault, kind: faults.Kind(f[0]), target: e.Target, start: e.Time, end: -1, err: e.Error}
			if len(f) > 1 {
				w.subject = f[1]
			}
			open[e.ID] = len(tl.faults)
			tl.faults = append(tl.faults, w)
		case history.FaultEnd:
			if i, ok := open[e.ID]; ok {
				w := &tl.faults[i]
				w.end = e.Time
				if e.Target != "" {
					w.target = e.Target
				}
				if e.Error != "" {
					w.err = e.Error
				}
				delete(open, e.ID)
			}
		}
	}
	tl.lastEvent = last
	for i := range tl.faults {
		if tl.faults[i].end < 0 {
			tl.faults[i].end = last
		}
	}
	for _, op := range history.Pair(events) {
		if !op.Synthetic {
			tl.all = append(tl.all, op)
		}
		if op.Type == history.Ok && !op.Synthetic {
			tl.ops = append(tl.ops, op)
		}
	}
	return tl
}

// windows lists the fault windows of kind, naming subject if it is not "".
func (tl timeline) windows(kind faults.Kind, subject string) []window {
	var out []window
	for _, w := range tl.faults {
		if w.kind == kind && (subject == "" || w.subject == subject) {
			out = append(out, w)
		}
	}
	return out
}

// member is the member a member fault took away: its resolved target, else
// the member it names.
func (w window) member() string {
	if w.target != "" {
		return w.target
	}
	return w.subject
}

// within reports whether t lies in the window.
func (w window) within(t int64) bool { return w.start <= t && t <= w.end }

// grants lists the ok acquires of client ("" for any), in call order.
func (tl timeline) grants(client string) []history.Operation {
	var out []history.Operation
	for _, op := range tl.ops {
		if op.Op == history.Acquire && (client == "" || op.Client == client) {
			out = append(out, op)
		}
	}
	return out
}

// releases lists every release of client, whatever its outcome, in call
// order.
func (tl timeline) releases(client string) []history.Operation {
	var out []history.Operation
	for _, op := range tl.all {
		if op.Op == history.Release && op.Client == client {
			out = append(out, op)
		}
	}
	return out
}

// clientsOf lists the clients connected through member, sorted.
func (tl timeline) clientsOf(member string) []string {
	var out []string
	for c, m := range tl.members {
		if m == member {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

func at(t int64) string { return time.Duration(t).Round(time.Millisecond).String() }

// during says what is missing unless one of times lies in a window of a
// fault of kind on subject; none names what no window held.
func (tl timeline) during(kind faults.Kind, subject string, times []int64, none string) string {
	ws := tl.windows(kind, subject)
	if len(ws) == 0 {
		return fmt.Sprintf("no %s fault on %s", kind, subject)
	}
	for _, w := range ws {
		if slices.ContainsFunc(times, w.within) {
			return ""
		}
	}
	return fmt.Sprintf("%s between %s and %s", none, at(ws[0].start), at(ws[0].end))
}

// leaseEndedDuring: client's lease ended on the server inside a window of
// the client fault kind on that client.
func leaseEndedDuring(client string, kind faults.Kind, what string) Effect {
	return Effect{
		Name: fmt.Sprintf("%s's lease ended on the server while %s", client, what),
		missing: func(tl timeline) string {
			var gone []int64
			for _, l := range tl.losses {
				if l.Client == client {
					gone = append(gone, l.Gone)
				}
			}
			return tl.during(kind, client, gone, fmt.Sprintf("no lease of %s ended", client))
		},
	}
}

// grantedDuring: client was granted the lock while a fault of kind held on
// other (the double-holder setting: other still believes it holds).
func grantedDuring(client string, kind faults.Kind, other, what string) Effect {
	return Effect{
		Name: fmt.Sprintf("%s was granted the lock while %s", client, what),
		missing: func(tl timeline) string {
			var granted []int64
			for _, g := range tl.grants(client) {
				granted = append(granted, g.Return)
			}
			return tl.during(kind, other, granted, fmt.Sprintf("no grant to %s", client))
		},
	}
}

// seen is when what (a history.Observed* constant) was first seen of
// client.
func (tl timeline) seen(what, client string) (int64, bool) {
	for _, o := range tl.observed {
		if o.What == what && o.Client == client {
			return o.Time, true
		}
	}
	return 0, false
}

// queuedAt is when client was first seen queued.
func (tl timeline) queuedAt(client string) (int64, bool) {
	return tl.seen(history.ObservedQueued, client)
}

// queuedThenExpired: client was seen queued, then its lease ended while its
// acquire still waited.
func queuedThenExpired(client string) Effect {
	return Effect{
		Name: fmt.Sprintf("%s was queued, then its lease ended while it waited", client),
		missing: func(tl timeline) string {
			queued, ok := tl.queuedAt(client)
			if !ok {
				return fmt.Sprintf("%s was never seen queued", client)
			}
			for _, l := range tl.losses {
				if l.Client == client && l.Gone >= queued {
					return ""
				}
			}
			return fmt.Sprintf("no lease of %s ended after it was queued at %s", client, at(queued))
		},
	}
}

// releasedWhileWaiting: holder released the lock after waiter was seen
// queued: the hand-over the lesson is about was put to the lock.
func releasedWhileWaiting(holder, waiter string) Effect {
	return Effect{
		Name: fmt.Sprintf("%s released the lock while %s waited", holder, waiter),
		missing: func(tl timeline) string {
			queued, ok := tl.queuedAt(waiter)
			if !ok {
				return fmt.Sprintf("%s was never seen queued", waiter)
			}
			for _, op := range tl.releases(holder) {
				if op.Type == history.Ok && op.Call >= queued {
					return ""
				}
			}
			return fmt.Sprintf("%s never released after %s was queued", holder, waiter)
		},
	}
}

// releaseTookEffectUnanswered: the server showed client's release had
// taken effect while the client still had no answer, and the client's
// release then ended without one (ambiguous: info).
func releaseTookEffectUnanswered(client string) Effect {
	return Effect{
		Name: fmt.Sprintf("%s's release took effect on the server and %s never heard so", client, client),
		missing: func(tl timeline) string {
			for _, o := range tl.observed {
				if o.What != history.ObservedReleased || o.Client != client {
					continue
				}
				for _, op := range tl.releases(client) {
					if op.Call <= o.Time && op.Type == history.Info {
						return ""
					}
				}
				return fmt.Sprintf("%s's release at %s got an answer", client, at(o.Time))
			}
			return fmt.Sprintf("the server was never seen to take %s's release unanswered", client)
		},
	}
}

// regrantedBeforeRetry: after its unanswered release, client was granted
// again on the same lease, and waiter was queued, before client released
// anything else (the retry).
func regrantedBeforeRetry(client, waiter string) Effect {
	return Effect{
		Name: fmt.Sprintf("%s was granted again on the same lease, with %s queued, before it retried the release", client, waiter),
		missing: func(tl timeline) string {
			grants := tl.grants(client)
			if len(grants) < 2 {
				return fmt.Sprintf("%s was granted %d time(s)", client, len(grants))
			}
			first, again := grants[0], grants[1]
			if first.Lease == 0 || first.Lease != again.Lease {
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
			if len(grants) < 2 || grants[0].Lease == 0 || grants[1].Lease == 0 || grants[0].Lease == grants[1].Lease {
				return ""
			}
			return fmt.Sprintf("it took a new lease for %s's second grant (%x, the first on %x): a release retried "+
				"by key name cannot reach a newer grant of the same session", client, grants[1].Lease, grants[0].Lease)
		},
	}
}

// lateReleaseWhileHeld: late's release was sent while holder held the
// lock (after its grant, before its release) and waiter was queued.
func lateReleaseWhileHeld(late, holder, waiter string) Effect {
	return Effect{
		Name: fmt.Sprintf("%s's late release was sent while %s held the lock and %s waited", late, holder, waiter),
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
func (tl timeline) cutOff(kind faults.Kind) (w window, clients []string, missing string) {
	ws := tl.windows(kind, "")
	if len(ws) == 0 {
		return w, nil, fmt.Sprintf("no %s fault", kind)
	}
	w = ws[0]
	clients = tl.clientsOf(w.member())
	if len(clients) == 0 {
		return w, nil, fmt.Sprintf("no client talks to %s", w.member())
	}
	return w, clients, ""
}

// cutOffLeasesEnded: every client of the member a fault of kind took away
// lost a lease on the server while the fault held; what says what became of
// the member ("isolated").
func cutOffLeasesEnded(kind faults.Kind, what string) Effect {
	return Effect{
		Name: fmt.Sprintf("the member's clients lost their leases on the server while it was %s", what),
		missing: func(tl timeline) string {
			w, cut, missing := tl.cutOff(kind)
			if missing != "" {
				return missing
			}
			var kept []string
			for _, c := range cut {
				if !slices.ContainsFunc(tl.losses, func(l history.Loss) bool { return l.Client == c && w.within(l.Gone) }) {
					kept = append(kept, c)
				}
			}
			if len(kept) > 0 {
				return fmt.Sprintf("%s (on %s) kept its lease from %s to %s", strings.Join(kept, ", "), w.member(), at(w.start), at(w.end))
			}
			return ""
		},
	}
}

// othersGranted: while a fault of kind held, a client of another member was
// granted the lock — under a leader other than the member taken away, if
// newLeader. what says what became of the member ("down").
func othersGranted(kind faults.Kind, what string, newLeader bool) Effect {
	name := "the rest of the cluster granted the lock while the member was " + what
	if newLeader {
		name = "a new leader was elected and the lock was granted under it while the old leader was down"
	}
	return Effect{
		Name: name,
		missing: func(tl timeline) string {
			ws := tl.windows(kind, "")
			if len(ws) == 0 {
				return fmt.Sprintf("no %s fault", kind)
			}
			w := ws[0]
			from := w.start
			if newLeader {
				from = -1
				for _, o := range tl.observed {
					if o.What == history.ObservedLeader && o.Member != w.member() && w.within(o.Time) {
						from = o.Time
						break
					}
				}
				if from < 0 {
					return fmt.Sprintf("no leader other than %s was seen between %s and %s", w.member(), at(w.start), at(w.end))
				}
			}
			for _, g := range tl.grants("") {
				if tl.members[g.Client] != w.member() && g.Return >= from && g.Return <= w.end {
					return ""
				}
			}
			return fmt.Sprintf("no client of another member than %s was granted between %s and %s", w.member(), at(from), at(w.end))
		},
	}
}

// rejoined: after a fault of kind ended, every client of the member it took
// away was granted the lock again.
func rejoined(kind faults.Kind) Effect {
	return Effect{
		Name: "after the fault was undone, the member's clients were granted the lock again",
		missing: func(tl timeline) string {
			w, cut, missing := tl.cutOff(kind)
			if missing != "" {
				return missing
			}
			var absent []string
			for _, c := range cut {
				if !slices.ContainsFunc(tl.grants(c), func(g history.Operation) bool { return g.Return > w.end }) {
					absent = append(absent, c)
				}
			}
			if len(absent) > 0 {
				return fmt.Sprintf("%s (on %s) was not granted after %s", strings.Join(absent, ", "), w.member(), at(w.end))
			}
			return ""
		},
	}
}

// contended: at least half the grants were contested — when the lock was
// granted, another client's acquire was waiting too — so the lock had to
// choose between clients, not just hand itself to one at a time. (Whether
// it chose fairly is not this effect's question.)
func contended() Effect {
	return Effect{
		Name: "most grants were contested by another waiting client",
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
func heldPastTTL(ttl time.Duration) Effect {
	return Effect{
		Name: fmt.Sprintf("a holder held the lock longer than its lease's TTL (%v) while another client waited", ttl),
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

// allFaultsApplied: the history has fault windows and every one of them
// was applied and undone without an error.
func allFaultsApplied() Effect {
	return Effect{
		Name: "every fault of the schedule was applied and undone",
		missing: func(tl timeline) string {
			if len(tl.faults) == 0 {
				return "no fault was applied"
			}
			for _, w := range tl.faults {
				if w.err != "" {
					return fmt.Sprintf("%s at %s: %s", w.fault, at(w.start), w.err)
				}
			}
			return ""
		},
	}
}

// EffectCount says in how many runs of a scenario × lock one effect
// happened. A run counts once, however many resources it judged: the
// effect happened if it is in every one of its histories.
type EffectCount struct {
	Scenario string `json:"scenario"`
	Lock     string `json:"lock"`
	Effect   string `json:"effect"`
	Happened int    `json:"happened"`
	Runs     int    `json:"runs"`
}

// EffectCounts tallies the effects of every run in s, in the order the
// results first name them.
func (s Summary) EffectCounts() []EffectCount {
	type runKey struct {
		scenario, lock string
		seed           uint64
		effect         string
	}
	type countKey struct{ scenario, lock, effect string }
	happened := map[runKey]bool{}
	var runs []runKey
	for _, r := range s.Results {
		for _, ef := range r.Effects {
			k := runKey{r.Scenario, r.Lock, r.Seed, ef.Name}
			was, seen := happened[k]
			if !seen {
				runs = append(runs, k)
				was = true
			}
			happened[k] = was && ef.Happened
		}
	}
	var out []EffectCount
	index := map[countKey]int{}
	for _, k := range runs {
		ck := countKey{k.scenario, k.lock, k.effect}
		i, ok := index[ck]
		if !ok {
			i = len(out)
			index[ck] = i
			out = append(out, EffectCount{Scenario: k.scenario, Lock: k.lock, Effect: k.effect})
		}
		out[i].Runs++
		if happened[k] {
			out[i].Happened++
		}
	}
	return out
}

// crashedAt is when client was first seen crashing.
func (tl timeline) crashedAt(client string) (int64, bool) {
	return tl.seen(history.ObservedCrashed, client)
}

// crashedHolding: client crashed while it held the lock: a grant of its had
// returned, and no release of it had been sent.
func crashedHolding(client string) Effect {
	return Effect{
		Name: fmt.Sprintf("%s crashed while it held the lock", client),
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

// waitedOutLease: waiter, seen queued before crashed crashed, was granted
// in that same wait once crashed's lease had ended: the lock passed on
// with the lease, nothing else freed it.
func waitedOutLease(waiter, crashed string) Effect {
	return Effect{
		Name: fmt.Sprintf("%s, queued before %s crashed, was granted once %s's lease ended", waiter, crashed, crashed),
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
