package models

import (
	"time"

	"github.com/locklab/locklab/history"
)

// DefaultTimeout bounds each Porcupine check; past it the answer is UNKNOWN.
const DefaultTimeout = 30 * time.Second

// Report is every verdict on one history.
type Report struct {
	// Safety verdicts decide the run: the resource stayed correct.
	Safety []Verdict `json:"safety"`
	// Belief is the mutex model's answer: whether two clients believed they
	// held the lock at once. Reported beside the safety verdict, never
	// instead of it.
	Belief Verdict `json:"belief"`
}

// Result is the worst safety result.
func (r Report) Result() Result {
	rs := make([]Result, len(r.Safety))
	for i, v := range r.Safety {
		rs[i] = v.Result
	}
	return Worst(rs...)
}

// Check validates a history's events, then runs every check on them; timeout
// bounds each Porcupine check (zero: DefaultTimeout). An invalid history is an
// error, never a verdict.
func Check(events []history.Event, timeout time.Duration) (Report, error) {
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
			CheckRegister(ops, events, timeout),
			CheckTokens(ops),
			CheckStaleWrites(ops),
			CheckValidity(ops, events),
		},
		Belief: CheckMutex(ops, events, timeout),
	}, nil
}
