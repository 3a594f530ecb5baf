package models

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
)

// leaderless says, in a phrase, when members of the cluster were without
// their leader in a run whose schedule has no fault that reaches the members
// (history.ObservedLeaderless): the machine held their heartbeats up past
// an election timeout, and a member without a leader refuses its clients
// what needs one — a lock that gives up an acquire or a release then meets
// the machine, not a lesson. "" when no member went without a leader, or a
// fault of the schedule may have made it so. evidence lists the spans.
func leaderless(events []history.Event) (phrase string, evidence []string) {
	for _, w := range history.FaultWindows(events) {
		if w.Spec.ReachesMembers() {
			return "", nil
		}
	}
	var spans []string
	for _, e := range events {
		if e.Type != history.Observed || e.What != history.ObservedLeaderless {
			continue
		}
		spans = append(spans, fmt.Sprintf("%s was without its leader from %v to %v into the run", e.Member,
			round(time.Duration(e.StalledFrom)), round(time.Duration(e.Time))))
	}
	if len(spans) == 0 {
		return "", nil
	}
	return fmt.Sprintf("the cluster lost its leader although no fault of the schedule reaches its members (%s)",
		strings.Join(spans, "; ")), spans
}
