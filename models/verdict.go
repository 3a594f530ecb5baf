package models

import "github.com/locklab/locklab/history"

// Result is a check's answer.
type Result string

// Results, from best to worst. NotApplicable means the history holds nothing
// the check could look at (no fencing tokens, say); it never hides a failure.
// Error is a run's result, never a check's: the run itself went wrong (a
// step did not do what its script says, a fault failed, the recorder lost
// events), so its history proves nothing either way.
const (
	NotApplicable Result = "N/A"
	Pass          Result = "PASS"
	Unknown       Result = "UNKNOWN" // the checker ran out of time: not decided, never a pass
	Error         Result = "ERROR"
	Fail          Result = "FAIL"
)

func (r Result) rank() int {
	switch r {
	case Pass:
		return 1
	case Unknown:
		return 2
	case Error:
		return 3
	case Fail:
		return 4
	}
	return 0
}

// Worst composes results: FAIL beats ERROR beats UNKNOWN beats PASS beats
// N/A.
func Worst(rs ...Result) Result {
	w := NotApplicable
	for _, r := range rs {
		if r.rank() > w.rank() {
			w = r
		}
	}
	return w
}

// Verdict is one check's answer on one history.
type Verdict struct {
	// Check names the check: "counter", "tokens", "stale-writes",
	// "validity", "expired-waiter", "lease-kept", "liveness", "progress",
	// "mutex".
	Check  string `json:"check"`
	Result Result `json:"result"`
	// Explanation is one paragraph a student can follow.
	Explanation string `json:"explanation"`
	// Evidence lists the few operations involved, described ("c2 acquire →
	// ok token=41 [1.2s, 1.3s]"), for FAIL.
	Evidence []string `json:"evidence,omitempty"`
	// Operations is how many operations the check looked at.
	Operations int `json:"operations"`

	viz *visualization
	// paceOnly marks an environment ERROR that explains only the run's
	// pace (its CPUs oversubscribed through most of it, see shortfalls),
	// never a check that caught the lock.
	paceOnly bool
	// lapsed marks an environment ERROR that names a lease the machine
	// let lapse: what followed (the next client rightly granted, a key of
	// the client's gone with its lease) may have hidden the lock's bug, so
	// a run that caught nothing is not a PASS either.
	lapsed bool
	// untimed marks an environment ERROR of a run documented to FAIL that
	// made its progress on a machine too busy to count for most of it (see
	// untimed): a run that caught nothing is not a PASS either.
	untimed bool
}

// verdicts sort by check name for stable output.
func evidence(ops ...history.Operation) []string {
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = describeSpan(op)
	}
	return out
}
