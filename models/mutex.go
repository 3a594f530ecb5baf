package models

import (
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/locklab/locklab/history"
)

// mutexModel: acquire is legal only while the lock is free, release only by
// its holder. An Info operation may or may not have happened.
var mutexModel = model[string]{
	name: "mutex",
	init: "",
	step: func(holder string, op history.Operation) []string {
		switch op.Op {
		case history.Acquire:
			switch {
			case op.Type == history.Ok && holder == "":
				return []string{op.Client}
			case op.Type == history.Ok:
				return nil
			case holder == "":
				return []string{"", op.Client}
			}
		case history.Release:
			switch {
			case op.Type == history.Ok && holder == op.Client:
				return []string{""}
			case op.Type == history.Ok:
				return nil
			case holder == op.Client:
				return []string{"", holder}
			}
		}
		return []string{holder}
	},
	hash: func(s string) uint64 {
		h := fnv.New64a()
		h.Write([]byte(s))
		return h.Sum64()
	},
	state: func(holder string) string {
		if holder == "" {
			return "free"
		}
		return "held by " + holder
	},
	partition: func(op history.Operation) string { return op.Lock },
}

// CheckMutex answers "did two clients ever believe they held the lock at
// once?" with Porcupine's mutex model over acquire and release, partitioned by
// lock name.
func CheckMutex(ops []history.Operation, faults []history.Event, timeout time.Duration) Verdict {
	sorted := slices.Clone(ops)
	slices.SortStableFunc(sorted, func(x, y history.Operation) int { return cmp64(x.Call, y.Call) })
	stale := staleReleases(sorted)
	ops = select_(ops, func(op history.Operation) bool {
		return (op.Op == history.Acquire || op.Op == history.Release) && op.Type != history.Fail && !stale[op.ID]
	})
	v := Verdict{Check: "mutex", Operations: len(ops)}
	if len(ops) == 0 {
		v.Result, v.Explanation = NotApplicable, "The history has no acquire or release."
		return v
	}
	res, viz := linearize(mutexModel, ops, faults, timeout)
	porcupineVerdict(&v, res, viz, timeout,
		"Every grant and release fits one holder at a time: no two clients ever believed they held the lock at once.",
		"Two clients believed they held the lock at the same time: no order of these acquires and releases "+
			"lets one client hold at a time. Each acted on a grant it had been given — a lease can end while its holder "+
			"is paused or cut off and still believes it holds the lock. Whether that harmed the resource is the safety "+
			"checks' question.",
		func() (string, []history.Operation) {
			a, b, ok := firstOverlap(windows(ops, nil, false, nil))
			if !ok {
				return "", nil
			}
			return fmt.Sprintf("For example, %s was granted the lock while %s still believed it held it.", b.grant.Client, a.grant.Client),
				[]history.Operation{a.grant, b.grant}
		})
	return v
}

// select_ keeps the operations keep accepts.
func select_(ops []history.Operation, keep func(history.Operation) bool) []history.Operation {
	var out []history.Operation
	for _, op := range ops {
		if keep(op) {
			out = append(out, op)
		}
	}
	return out
}
