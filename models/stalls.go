package models

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
)

// The lab's own process standing still (history.ObservedStalled) explains
// a run that fell short of its script or of its progress when the stalls
// add up to at least stallShare of the run, or one of them lasted
// stallLong or more: a client starved that long misses deadlines and
// grants that a machine with time to spare would have given it.
const (
	stallShare = 0.05
	stallLong  = 500 * time.Millisecond
)

// stalls is what the lab's own process lost to standing still in a run.
type stalls struct {
	n              int
	total, longest time.Duration
	shortest       time.Duration
	span           time.Duration // the run's length: its last event's time
	evidence       []string      // the longest few, in time order
}

// stallsOf adds up the stalls events record.
func stallsOf(events []history.Event) stalls {
	var s stalls
	var stood []history.Event
	for _, e := range events {
		s.span = max(s.span, time.Duration(e.Time))
		if e.Type == history.Observed && e.What == history.ObservedStalled {
			stood = append(stood, e)
		}
	}
	length := func(e history.Event) time.Duration { return time.Duration(e.Time - e.StalledFrom) }
	for i, e := range stood {
		d := length(e)
		if i == 0 || d < s.shortest {
			s.shortest = d
		}
		s.total += d
		s.longest = max(s.longest, d)
	}
	s.n = len(stood)
	// The longest few, in time order.
	slices.SortStableFunc(stood, func(a, b history.Event) int { return cmp.Compare(length(b), length(a)) })
	stood = stood[:min(len(stood), maxStallEvidence)]
	slices.SortFunc(stood, func(a, b history.Event) int { return cmp.Compare(a.Time, b.Time) })
	for _, e := range stood {
		s.evidence = append(s.evidence, fmt.Sprintf("the lab's own process stood still %v, from %v to %v into the run",
			round(length(e)), round(time.Duration(e.StalledFrom)), round(time.Duration(e.Time))))
	}
	return s
}

// maxStallEvidence is how many stalls, the longest, a verdict lists.
const maxStallEvidence = 5

// explain reports whether the stalls explain a run that fell short.
func (s stalls) explain() bool {
	return s.n > 0 && (s.longest >= stallLong || s.span > 0 && float64(s.total) >= stallShare*float64(s.span))
}

// String says the stalls in a phrase.
func (s stalls) String() string {
	if s.n == 1 {
		return fmt.Sprintf("the lab's own process stood still once, for %v, in a run of %v", round(s.total), round(s.span))
	}
	return fmt.Sprintf("the lab's own process stood still %d times (%v–%v, %v in all) in a run of %v",
		s.n, round(s.shortest), round(s.longest), round(s.total), round(s.span))
}

func round(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }

// shortfalls says how the run fell short while the lab stood still (or,
// with no fault that reaches them, the cluster's members went without a
// leader: see leaderless) — of
// its progress (fewer grants, sections or writes than min asks), of its
// script (history.RunError) or of what its scenario claims happens
// (missing, see didNotHappen: a 400 ms cut the lab stood still in for a
// second is no brief cut) — when the stalls explain it (see
// stalls.explain): a busy machine's doing, not evidence against the lock.
// A lock that granted nothing at all is not excused its progress: no stall
// keeps a working lock from granting once. The machine's CPUs
// oversubscribed (history.ObservedStarved) explain a progress shortfall
// only, and only when the machine was too busy to count for most of the
// run (see starvedRun): a lock cannot be held to a pace on a machine that
// gave it no CPU, while a user's lock caught failing a check stays caught
// however busy the runner. (A step gone astray is ERROR whatever the
// environment did; excused, it is run again.)
//
// starved says the shortfall is the oversubscribed CPUs' alone: it
// explains the run's pace, never a check that caught the lock.
func shortfalls(ops []history.Operation, events []history.Event, min *history.Minimum, missing string) (why, evidence []string, starved bool) {
	s := stallsOf(events)
	var short []string
	if min != nil && grants(ops) > 0 {
		short, _ = shortBy(ops, min)
	}
	excuse, evidence := s.String(), s.evidence
	if !s.explain() {
		excuse, evidence = leaderless(events)
	}
	if excuse == "" {
		if busy := starvedRun(events); len(short) > 0 && busy != "" {
			return []string{fmt.Sprintf("the run made too little progress (%s) while %s", strings.Join(short, "; "), busy)},
				s.evidence, true
		}
		return nil, nil, false
	}
	if len(short) > 0 {
		why = append(why, fmt.Sprintf("the run made too little progress (%s) while %s", strings.Join(short, "; "), excuse))
	}
	if runErr := history.RunError(events); runErr != "" {
		first, _, _ := strings.Cut(runErr, "\n")
		why = append(why, fmt.Sprintf("a step went otherwise than its script (%s) while %s", first, excuse))
	}
	if missing != "" {
		why = append(why, fmt.Sprintf("the schedule did not do what its scenario claims (%s) while %s — a fault the "+
			"lab stood still in lasts longer than the lesson meant", missing, excuse))
	}
	if len(why) == 0 {
		return nil, nil, false
	}
	return why, evidence, false
}

// starvedShare is how much of a run the machine must have been too busy to
// count (busySpans) for its CPUs oversubscribed to explain the run's
// progress shortfall.
const starvedShare = 0.5

// starvedRun says, in a phrase, how much of the run the machine was too
// busy to count — its CPUs oversubscribed, or the lab's own process
// standing still (busySpans) — when that was starvedShare of it or more;
// "" when it was less.
func starvedRun(events []history.Event) string {
	var span int64
	for _, e := range events {
		span = max(span, e.Time)
	}
	busy := busyWithin(busySpans(events, true), 0, span)
	if span == 0 || float64(busy) < starvedShare*float64(span) {
		return ""
	}
	return fmt.Sprintf("the machine was too busy to count for %v of the run's %v (its CPUs oversubscribed, or the lab's "+
		"own process standing still)", round(time.Duration(busy)), round(time.Duration(span)))
}
