package models

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/history"
)

// CheckDeadline checks the contract's promise that Acquire returns by its
// context's deadline (history.Event.Deadline): it FAILs an acquire that
// returned a grant more than history.DeadlineGrace after its deadline, or
// had not answered history.DeadlineWait after it (when the lab stops
// waiting) or by the end of the history. A caller whose context ended has
// moved on: a grant handed to it later is a lock held for nobody (until its
// lease ends — never, on a session that lives on), and a call that does
// not return keeps its caller from anything else. An error returned late,
// within history.DeadlineWait, is not judged (see there). A stall of the
// lab's own process in that time excuses it (the lock stood still too), and
// a call that did not return is excused by a fault that could reach its
// client while it ran (see reaches: its member killed or cut off, its link
// cut): a lock may wait on that member to clean up, as etcd's Mutex does.
// A late grant has no such excuse: it is handed to nobody, fault or not.
// N/A when the history records no deadline.
func CheckDeadline(ops []history.Operation, events []history.Event) Verdict {
	v := Verdict{Check: "deadline"}
	var end int64
	for _, e := range events {
		end = max(end, e.Time)
	}
	excused, members := excuses(events), connections(events)
	for _, op := range ops {
		if op.Op != history.Acquire || op.Deadline == 0 || op.Synthetic {
			continue
		}
		v.Operations++
		answered := op.Answered
		if answered == 0 {
			answered = end
		}
		late := answered - op.Deadline
		switch {
		case op.Type == history.Ok && late > int64(history.DeadlineGrace):
		case op.Type != history.Ok && (op.Answered == 0 && late > int64(history.DeadlineGrace) ||
			late >= int64(history.DeadlineWait)):
		default:
			continue
		}
		if excusedBetween(excused, op.Deadline, answered, 0, false) ||
			op.Type != history.Ok && excusedBetween(reaching(excused, op.Client, members), op.Call, answered, 0, true) {
			continue
		}
		v.Result, v.Evidence = Fail, evidence(op)
		v.Explanation = lateExplanationOf(op, end)
		return v
	}
	if v.Operations == 0 {
		v.Result, v.Explanation = NotApplicable, "The history records no acquire's deadline."
		return v
	}
	v.Result = Pass
	v.Explanation = fmt.Sprintf("All %d acquires returned by their context's deadline: no grant came more than %v after "+
		"it, and every call answered within %v of it (or the lab's own process stood still meanwhile, or a fault "+
		"held its client from its member).",
		v.Operations, history.DeadlineGrace, history.DeadlineWait)
	return v
}

// lateExplanationOf says how far past its deadline op answered, or that it
// had not answered when the history ended at end.
func lateExplanationOf(op history.Operation, end int64) string {
	ms := func(d int64) time.Duration { return time.Duration(d).Round(time.Millisecond) }
	called := fmt.Sprintf("%s's acquire, called at %s with a deadline %v later,", op.Client, at(op.Call), ms(op.Deadline-op.Call))
	const must = " Acquire must return the context's error once the context ends: the caller has moved on"
	if op.Answered == 0 {
		return fmt.Sprintf("%s had not answered when the history ended, %v past its deadline.%s, and a call that "+
			"never returns keeps it from everything else.", called, ms(end-op.Deadline), must)
	}
	if op.Type != history.Ok {
		return fmt.Sprintf("%s had still not returned %v past its deadline, when the lab stopped waiting for it (%q).%s, "+
			"and a call that does not return keeps it from everything else.", called, ms(op.Answered-op.Deadline), op.Error, must)
	}
	return fmt.Sprintf("%s returned a grant (token %d) %v past its deadline (a grant may come %v late at most).%s, "+
		"and a grant handed to it then is a lock held for nobody — until its lease ends, or for ever on a session "+
		"that lives on — while the next client waits.", called, op.Token, ms(op.Answered-op.Deadline),
		history.DeadlineGrace, must)
}
