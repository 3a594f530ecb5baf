package models

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
)

// Effect is something a scenario claims happens in every run of it — "c1's
// lease ended while c1 was paused", "a new leader was elected and granted
// the lock" — checked over the run's history alone, so that an offline
// check of the file judges it the same way. A run in which an effect did not
// happen did not exercise what the scenario names (a vacuous schedule): it
// cannot PASS.
type effect struct {
	// name says what must happen.
	name string
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

// CheckEffects judges each claimed effect on one history, in order.
func CheckEffects(effects []history.Effect, events []history.Event) []EffectResult {
	if len(effects) == 0 {
		return nil
	}
	tl := newTimeline(events)
	out := make([]EffectResult, len(effects))
	for i, e := range effects {
		ef := judgeOf(e)
		m := ef.missing(tl)
		out[i] = EffectResult{Name: ef.name, Happened: m == "", Missing: m}
		if ef.moot != nil && m != "" {
			out[i].Moot = ef.moot(tl)
		}
	}
	return out
}

// EffectName says what e claims, as a report lists it.
func EffectName(e history.Effect) string { return judgeOf(e).name }

// judgeOf is the judgement of one kind of effect, for e's clients, fault
// and bounds.
func judgeOf(e history.Effect) effect {
	c := e.Client
	switch e.Kind {
	case history.EffectLeaseEndedDuring:
		return leaseEndedDuring(c(0), cmp.Or(c(1), c(0)), e.Fault, e.What)
	case history.EffectGrantedDuring:
		return grantedDuring(c(0), e.Fault, c(1), e.What)
	case history.EffectQueuedThenExpired:
		return queuedThenExpired(c(0))
	case history.EffectReleasedWhileWaiting:
		return releasedWhileWaiting(c(0), c(1))
	case history.EffectReleaseUnanswered:
		return releaseTookEffectUnanswered(c(0))
	case history.EffectAcquireUnanswered:
		return acquireTookEffectUnanswered(c(0))
	case history.EffectBlippedHolding:
		return blippedHolding(c(0), time.Duration(e.TTL), e.Fault)
	case history.EffectBlippedWaiting:
		return blippedWaiting(c(0), time.Duration(e.TTL), e.Fault)
	case history.EffectSlowHolding:
		return slowHolding(c(0), time.Duration(e.TTL))
	case history.EffectSlowGranted:
		return slowGranted(c(0))
	case history.EffectRegrantedBeforeRetry:
		return regrantedBeforeRetry(c(0), c(1))
	case history.EffectLateReleaseWhileHeld:
		return lateReleaseWhileHeld(c(0), c(1), c(2))
	case history.EffectCutOffLeasesEnded:
		return cutOffLeasesEnded(e.Fault, e.What)
	case history.EffectOthersGranted:
		return othersGranted(e.Fault, e.What, e.NewLeader)
	case history.EffectAskedCutOff:
		return askedCutOff(c(0))
	case history.EffectRejoined:
		return rejoined(e.Fault)
	case history.EffectRequestLost:
		return requestLost(c(0))
	case history.EffectContended:
		return contended()
	case history.EffectHeldPastTTL:
		return heldPastTTL(time.Duration(e.TTL))
	case history.EffectAllFaultsApplied:
		return allFaultsApplied()
	case history.EffectCrashedHolding:
		return crashedHolding(c(0))
	case history.EffectWaitedOutLease:
		return waitedOutLease(c(0), c(1))
	case history.EffectCrashedPaused:
		return crashedPaused(c(0), e.What)
	case history.EffectGaveUp:
		return gaveUp(c(0), c(1))
	}
	return effect{name: fmt.Sprintf("unknown effect %q", e.Kind),
		missing: func(timeline) string { return "this locklab cannot judge it" }}
}

// JudgeEffects folds a run's effects into its result: a result other than
// FAIL becomes ERROR when an effect did not happen — the schedule never
// exercised what the scenario names, which is no evidence of safety — and
// a FAIL stays (a violation found is evidence whatever else happened).
// missing says what did not happen ("" if everything did).
func JudgeEffects(result Result, effects []EffectResult) (judged Result, missing string) {
	missing = Vacuous(effects)
	if missing != "" && result != Fail {
		return Error, missing
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
	if missing := didNotHappen(effects); missing != "" {
		return "vacuous schedule: " + missing
	}
	return ""
}

// didNotHappen lists the effects that did not happen, and what each
// lacks, or "" if all did.
func didNotHappen(effects []EffectResult) string {
	var missing []string
	for _, ef := range effects {
		if !ef.Happened {
			missing = append(missing, fmt.Sprintf("%s (%s)", ef.Name, ef.Missing))
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return "did not happen: " + strings.Join(missing, "; ")
}

// timeline is a history read for effects: who talks to which member, the
// fault windows, the lease losses, the operations and the observations.
type timeline struct {
	members   map[string]string // client → member
	faults    []history.FaultWindow
	losses    []history.Loss
	ops       []history.Operation // completed ok, in call order
	all       []history.Operation // every operation, in call order
	observed  []history.Event
	lastEvent int64 // the time of the history's last event
}

// faultSubject is what a fault names: its client, else its member.
func faultSubject(w history.FaultWindow) string { return cmp.Or(w.Spec.Client, w.Spec.Member) }

func newTimeline(events []history.Event) timeline {
	tl := timeline{members: map[string]string{}, losses: history.LeaseLosses(events)}
	var last int64
	for _, e := range events {
		last = max(last, e.Time)
		switch e.Type {
		case history.Observed:
			tl.observed = append(tl.observed, e)
			if e.What == history.ObservedConnected {
				tl.members[e.Client] = e.Member
			}
		}
	}
	tl.lastEvent = last
	tl.faults = history.FaultWindows(events)
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
func (tl timeline) faultWindows(kind history.FaultKind, name string) []history.FaultWindow {
	var out []history.FaultWindow
	for _, w := range tl.faults {
		if history.FaultKind(w.Spec.Kind) == kind && (name == "" || faultSubject(w) == name) {
			out = append(out, w)
		}
	}
	return out
}

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

// during says what is missing unless one of times lies in a history.FaultWindow of a
// fault of kind on subject; none names what no history.FaultWindow held.
func (tl timeline) during(kind history.FaultKind, subject string, times []int64, none string) string {
	ws := tl.faultWindows(kind, subject)
	if len(ws) == 0 {
		return fmt.Sprintf("no %s fault on %s", kind, subject)
	}
	for _, w := range ws {
		if slices.ContainsFunc(times, w.Within) {
			return ""
		}
	}
	return fmt.Sprintf("%s between %s and %s", none, at(ws[0].Start), at(ws[0].End))
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
