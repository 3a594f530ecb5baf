package reports

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
)

// maxStory bounds the narrative; longer histories end with a count of what
// was left out.
const maxStory = 60

// starvedGap is the most time between two stretches of oversubscribed CPUs
// that the story tells as one.
const starvedGap = int64(1500 * time.Millisecond)

// story tells a history in sentences, in time order: "1.44s: the server
// ended c1's lease (last known alive at 1.40s)".
func story(events []history.Event) []string {
	labels := tokenLabels(history.Pair(events))
	label := func(t int64) string {
		if l, ok := labels[t]; ok {
			return l
		}
		if t == 0 {
			return "no token"
		}
		return fmt.Sprintf("token %d", t)
	}
	ops := map[int]history.Event{}
	var out []string
	starved := -1 // the line of the latest oversubscribed stretch, while nothing came after it
	var starvedFrom, starvedAt int64
	for _, e := range events {
		if e.Type == history.Observed && e.What == history.ObservedStarved {
			// Stretches one after the other (the watcher notes each
			// second) are one line, its end moved on.
			if starved == len(out)-1 && starved >= 0 && e.StalledFrom-starvedAt <= starvedGap {
				out[starved] = fmt.Sprintf("%s: the machine's CPUs were oversubscribed from %s to %s: the run was slowed",
					at(starvedFrom), at(starvedFrom), at(e.Time))
				starvedAt = e.Time
				continue
			}
			starved, starvedFrom, starvedAt = len(out), e.StalledFrom, e.Time
		}
		line := ""
		switch e.Type {
		case history.Invoke:
			ops[e.ID] = e
			if e.Op == history.Acquire {
				line = e.Client + " asks for the lock"
			}
		case history.Ok:
			switch e.Op {
			case history.Acquire:
				line = fmt.Sprintf("%s is granted the lock, %s", e.Client, label(e.Token))
			case history.CS:
				line = fmt.Sprintf("%s reads %s and writes %s with %s: %s", e.Client, value(e.Value), plusOne(e.Value), label(e.Token), accepted(e))
			case history.Release:
				line = fmt.Sprintf("%s releases %s", e.Client, label(e.Token))
			}
		case history.Fail, history.Info:
			outcome := "fails"
			if e.Type == history.Info {
				outcome = "ends with no answer (it may or may not have happened)"
			}
			line = fmt.Sprintf("%s's %s %s: %s", e.Client, e.Op, outcome, e.Error)
		case history.FaultStart:
			line = "fault: " + e.Fault + target(e.Target)
		case history.FaultEnd:
			line = "fault undone: " + e.Fault
			if e.Error != "" {
				line += " (error: " + e.Error + ")"
			}
		case history.LeaseLost:
			line = fmt.Sprintf("the server has ended %s's lease (last known alive at %s)", e.Client, at(e.AliveUntil))
		case history.Observed:
			line = observed(e)
		case history.Final:
			line = "the resource's final value is " + value(e.Value)
		}
		if line != "" {
			out = append(out, at(e.Time)+": "+line)
		}
	}
	if len(out) > maxStory {
		n := len(out) - maxStory
		out = append(out[:maxStory], fmt.Sprintf("… and %d more events (the history file has them all)", n))
	}
	return out
}

func target(t string) string {
	if t == "" {
		return ""
	}
	return " → " + t
}

func plusOne(v *int64) string {
	if v == nil {
		return "?"
	}
	return fmt.Sprint(*v + 1)
}

func accepted(e history.Event) string {
	switch {
	case e.Accepted == nil:
		return "no answer"
	case *e.Accepted:
		return "accepted"
	}
	return "REJECTED (" + e.Reason + ")"
}

func observed(e history.Event) string {
	switch e.What {
	case history.ObservedConnected:
		return fmt.Sprintf("%s talks to the cluster through %s", e.Client, e.Member)
	case history.ObservedQueued:
		return e.Client + " is seen waiting in the lock's queue"
	case history.ObservedLeader:
		return e.Member + " leads the cluster"
	case history.ObservedReleased:
		return "the server shows " + e.Client + "'s release took effect, though " + e.Client + " has no answer yet"
	case history.ObservedGrantGone:
		return fmt.Sprintf("%s's lock key is gone from the server while %s holds it", e.Client, e.Client)
	case history.ObservedStalled:
		return fmt.Sprintf("the lab itself stood still since %s", at(e.StalledFrom))
	case history.ObservedStarved:
		return fmt.Sprintf("the machine's CPUs were oversubscribed since %s: the run was slowed", at(e.StalledFrom))
	case history.ObservedLeaderless:
		return fmt.Sprintf("%s was without its leader since %s (it followed none, or an election came between)",
			e.Member, at(e.StalledFrom))
	case history.ObservedBadToken:
		return history.BadTokenOf(e).String()
	case history.ObservedSaidEnded:
		return e.Client + "'s lock says its grant is gone (its session ended, or the grant is not held)"
	case history.ObservedCrashed:
		return e.Client + " is killed and started again: it holds nothing now, though the server keeps its keys until its lease ends"
	}
	return strings.TrimSpace("seen: " + e.What + " " + e.Client + " " + e.Member)
}
