package models

import (
	"time"

	"github.com/locklab/locklab/history"
)

// DefaultTimeout bounds each Porcupine check; past it the answer is UNKNOWN.
const DefaultTimeout = 30 * time.Second

// Report is every verdict on one history.
type Report struct {
	// Safety verdicts decide the run: the resource stayed correct and the
	// lock never granted what it could not.
	Safety []Verdict `json:"safety"`
	// Liveness says whether the lock recovered after the last fault (FAIL:
	// an acquire waited past the scenario's bound while nobody was
	// granted). A FAIL is evidence against the lock, as a safety
	// violation is.
	Liveness Verdict `json:"liveness"`
	// HandOff says whether the lock handed a free lock to its waiters
	// (FAIL: one was left waiting, never granted, while the lock stood
	// free; see CheckHandOff). Evidence against the lock that matches no
	// documented outcome.
	HandOff Verdict `json:"hand_off"`
	// Progress says whether the run did enough to judge the lock (FAIL:
	// too little, so no verdict of the run can count as a pass).
	Progress Verdict `json:"progress"`
	// Belief is the mutex model's answer: whether two clients believed they
	// held the lock at once. Reported beside the safety verdict, never
	// instead of it.
	Belief Verdict `json:"belief"`
	// Environment says whether the run's environment, not the lock, took a
	// holder's lease away (ERROR; see CheckEnvironment). Not a safety
	// verdict: Judge reads it.
	Environment Verdict `json:"environment"`
	// LostFraction is the share of acknowledged increments missing from the
	// resource's final value (nil: not recorded).
	LostFraction *float64 `json:"lost_fraction,omitempty"`
}

// Result is the worst of the safety, liveness, hand-off and progress results.
func (r Report) Result() Result {
	rs := []Result{r.Progress.Result, r.Liveness.Result, r.HandOff.Result}
	for _, v := range r.Safety {
		rs = append(rs, v.Result)
	}
	return Worst(rs...)
}

// Verdicts lists every verdict: safety, liveness, hand-off, progress, belief, then the
// environment's when it took a lease away (ERROR).
func (r Report) Verdicts() []Verdict {
	out := append(append(append([]Verdict(nil), r.Safety...), r.Liveness, r.HandOff, r.Progress), r.Belief)
	if r.Environment.Result == Error {
		out = append(out, r.Environment)
	}
	return out
}

// Check validates a history's events, then runs every check on them: the
// same checks whether the history was just recorded or is read back from a
// file, so `locklab check` gives every verdict the run gave. h supplies the
// minimum progress (h.Minimum); timeout bounds each Porcupine check (zero:
// DefaultTimeout). An invalid history is an error, never a verdict.
func Check(h history.Header, events []history.Event, timeout time.Duration) (Report, error) {
	if err := history.Validate(events); err != nil {
		return Report{}, err
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ops := history.Pair(events)
	return Report{
		Safety: []Verdict{
			CheckCounter(ops, events, timeout),
			CheckTokens(ops, events),
			CheckStaleWrites(ops),
			CheckValidity(ops, events),
			CheckExpiredWaiter(ops, events),
			CheckLeaseKept(ops, events),
			CheckDeadline(ops, events),
			CheckToldLost(ops, events),
			CheckRelease(ops, events),
		},
		Liveness: CheckLiveness(ops, events, h.Minimum),
		HandOff:  CheckHandOff(ops, events, h.Minimum),
		Progress: CheckProgress(ops, events, h.Minimum),
		Belief:   CheckMutex(ops, events, timeout),
		Environment: untimed(checkEnvironment(ops, events, h.Minimum, didNotHappen(CheckEffects(h.Effects, events))),
			events, h.Expect),
		LostFraction: LostFraction(ops, events),
	}, nil
}
