package models

import (
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/history"
)

// counterModel: each critical section reads the counter and, if the resource
// accepts its write, sets it to read+1 — atomically. Under mutual exclusion
// (or working fencing) a history of critical sections linearizes as atomic
// increments; a lost update (two sections both read 5 and both wrote 6) does
// not.
var counterModel = model[int64]{
	name: "counter",
	init: 0,
	step: func(s int64, op history.Operation) []int64 {
		if op.Value != nil && *op.Value != s {
			return nil // the read must see the current value
		}
		switch {
		case op.Accepted != nil && !*op.Accepted:
			return []int64{s} // rejected: a read only
		case op.Type == history.Ok:
			return []int64{s + 1}
		}
		return []int64{s, s + 1} // Info: the write may or may not have landed
	},
	hash:  func(s int64) uint64 { return uint64(s) },
	state: func(s int64) string { return fmt.Sprintf("counter = %d", s) },
}

// CheckCounter answers "did the protected resource stay correct?" for the
// critical-section workload.
func CheckCounter(ops []history.Operation, faults []history.Event, timeout time.Duration) Verdict {
	ops = select_(ops, func(op history.Operation) bool { return op.Op == history.CS && op.Type != history.Fail })
	v := Verdict{Check: "counter", Operations: len(ops)}
	if len(ops) == 0 {
		v.Result, v.Explanation = NotApplicable, "The history has no critical section."
		return v
	}
	res, viz := linearize(counterModel, ops, faults, timeout)
	porcupineVerdict(&v, res, viz, timeout,
		fmt.Sprintf("The %d critical sections behave as atomic increments of the counter, one after another: no update was lost.", len(ops)),
		"The critical sections do not behave as atomic increments.",
		func() (string, []history.Operation) {
			if a, b, ok := lostUpdate(ops); ok {
				return fmt.Sprintf("An update was lost: two clients were inside the critical section at once and the resource "+
						"accepted both writes. %s and %s both read %d and both wrote %d.", a.Client, b.Client, *a.Value, *a.Value+1),
					[]history.Operation{a, b}
			}
			return "Some section read a value that no order of the sections before it could have left; the evidence " +
				"shows the last section that fits and the one that cannot follow it.", nil
		})
	return v
}

// lostUpdate finds two accepted, completed critical sections that read the
// same value.
func lostUpdate(ops []history.Operation) (a, b history.Operation, ok bool) {
	byRead := map[int64]history.Operation{}
	sorted := slices.Clone(ops)
	slices.SortStableFunc(sorted, func(x, y history.Operation) int { return cmp64(x.Call, y.Call) })
	for _, op := range sorted {
		if op.Type != history.Ok || op.Value == nil || (op.Accepted != nil && !*op.Accepted) {
			continue
		}
		if prev, seen := byRead[*op.Value]; seen {
			return prev, op, true
		}
		byRead[*op.Value] = op
	}
	return a, b, false
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
