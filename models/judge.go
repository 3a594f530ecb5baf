package models

import (
	"slices"
	"time"

	"github.com/locklab/locklab/history"
)

// Expect is what a configuration is documented to get.
type Expect string

// Expectations. Any is reported but never gates: the outcome depends on
// timing the schedule does not fix (the random scenario on an unfenced
// resource).
const (
	ExpectPass Expect = "PASS"
	ExpectFail Expect = "FAIL"
	ExpectAny  Expect = "ANY"
)

// Judgement is the last word on one history: its verdict, and whether
// that is what its configuration documents.
type Judgement struct {
	// Verdict is PASS, FAIL, UNKNOWN or ERROR; empty when Skipped.
	Verdict Result
	// Caught says a safety check FAILed: evidence of a violation whatever
	// else went wrong.
	Caught bool
	// Matches says the verdict is the documented one.
	Matches bool
	// Error says why the verdict is ERROR (or, beside a FAIL, how the run
	// went otherwise than its script); Skipped why there is no verdict.
	Error, Skipped string
}

// Judge folds a history's checks (rep), its claimed effects and the run's
// own error (runErr: a step did not do what its script says; "" for none)
// into its judgement against expect — the same for a run that just ended
// and for `locklab check` of its file:
//   - a lesson that cannot happen to the lock by its design (a moot effect)
//     gives no verdict, however the steps after went: skipped, unless a
//     check caught a violation;
//   - a run that went wrong proves nothing: ERROR, unless a check caught a
//     violation, which is the verdict whatever else happened;
//   - an effect that did not happen makes the schedule vacuous: ERROR,
//     unless a check caught a violation;
//   - a violation caught where a PASS is documented, in a run whose
//     environment took a holder's lease away (see CheckEnvironment), is
//     ERROR: the busy machine, not the lock, may be what it shows. It never
//     matches, and is never a PASS either;
//   - too little progress in a run whose environment cut it short (the
//     lab's own process stood still: see CheckEnvironment) is ERROR too,
//     not the lock's FAIL;
//   - a run that caught nothing while its environment let a lease lapse
//     is ERROR, not PASS: the lapse may have done what the lesson waits
//     for the lock to do (a waiter's key that gave up, gone with its
//     lease, frees the lock for the next), so the lock was not judged.
func Judge(rep Report, effects []EffectResult, runErr string, expect Expect) Judgement {
	// others: a check other than hand-off caught the lock (see matches).
	others := rep.Liveness.Result == Fail || slices.ContainsFunc(rep.Safety, func(v Verdict) bool { return v.Result == Fail })
	j := Judgement{Verdict: rep.Result(), Caught: others || rep.HandOff.Result == Fail}
	switch {
	case !j.Caught && Moot(effects) != "":
		// What the script expected after the lesson's premise failed is no
		// evidence either way.
		j.Skipped, j.Verdict = Moot(effects), ""
	case runErr != "" && !j.Caught:
		j.Verdict, j.Error = Error, runErr
	case runErr != "":
		j.Error = runErr
	case j.Caught && expect == ExpectPass && rep.Environment.Result == Error && !rep.Environment.paceOnly,
		!j.Caught && rep.Progress.Result == Fail && rep.Environment.Result == Error,
		!j.Caught && rep.Environment.Result == Error && (rep.Environment.lapsed || rep.Environment.untimed):
		j.Verdict, j.Error = Error, rep.Environment.Explanation
	default:
		j.Verdict, j.Error = JudgeEffects(j.Verdict, effects)
	}
	j.Matches = j.matches(rep.Progress.Result, rep.Liveness.Result, rep.HandOff.Result, others, effects, expect)
	return j
}

// matches decides whether a judgement is what its configuration documents:
// an ERROR, an UNKNOWN or too little progress never is, whatever was
// expected (a documented FAIL must come from a check that caught
// something, not from a run that did nothing). A caught violation is
// evidence however little else the run did, so an expected FAIL it
// matches; ANY leaves the resource's fate to timing, never the lock's
// recovery, so a liveness FAIL does not match it. A hand-off FAIL alone
// (no other check caught anything) matches nothing: a lock that grants
// nothing fails it in any lesson, whatever the lesson documents.
func (j Judgement) matches(progress, liveness, handOff Result, caught bool, effects []EffectResult, expect Expect) bool {
	switch {
	case j.Skipped != "":
		return false
	case handOff == Fail && !caught:
		return false
	case j.Caught:
		return j.Verdict == Fail && (expect == ExpectFail || expect == ExpectAny && liveness != Fail)
	case j.Verdict == Error || j.Verdict == Unknown || progress == Fail:
		return false
	case Vacuous(effects) != "":
		return false
	case expect == ExpectAny:
		return true
	}
	return string(expect) == string(j.Verdict)
}

// JudgeHistory judges a recorded history from itself alone: every check,
// the effects its header claims and the expectation its header documents
// (PASS when it documents none), and the run's own error as the file
// records it (history.RunError). It is what `locklab check` does, and gives
// the judgement the run gave. An invalid history is an error, never a
// judgement.
func JudgeHistory(h history.Header, events []history.Event, timeout time.Duration) (Report, []EffectResult, Judgement, error) {
	rep, err := Check(h, events, timeout)
	if err != nil {
		return rep, nil, Judgement{}, err
	}
	effects := CheckEffects(h.Effects, events)
	expect := Expect(h.Expect)
	if expect == "" {
		expect = ExpectPass
	}
	return rep, effects, Judge(rep, effects, history.RunError(events), expect), nil
}

// TooLittleProgress reports whether a FAIL verdict comes from the progress
// check alone (checks are a history's verdicts, as Report.Verdicts lists
// them): the run did too little to judge the lock, and no check caught it
// doing anything wrong. Such a FAIL is to be shown as what it is, never as
// a safety failure (see Shown).
func TooLittleProgress(verdict Result, checks []Verdict) bool {
	if verdict != Fail {
		return false
	}
	short := false
	for _, v := range checks {
		switch {
		case v.Result != Fail || v.Check == "mutex":
		case v.Check == "progress":
			short = true
		default:
			return false
		}
	}
	return short
}

// Shown is a verdict as people read it: "FAIL (too little progress)" for a
// FAIL that only the progress check gave (see TooLittleProgress), the
// verdict itself otherwise.
func Shown(verdict Result, checks []Verdict) string {
	if TooLittleProgress(verdict, checks) {
		return "FAIL (too little progress)"
	}
	return string(verdict)
}
