package models_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

func report(safety, progress models.Result) models.Report {
	return models.Report{Safety: []models.Verdict{{Check: "counter", Result: safety}},
		Progress: models.Verdict{Check: "progress", Result: progress}}
}

// wedged is a report whose liveness check FAILed (and whose progress did,
// the wedged lock granting too little).
func wedged() models.Report {
	rep := report(models.Pass, models.Fail)
	rep.Liveness = models.Verdict{Check: "liveness", Result: models.Fail}
	return rep
}

// stranded is a report whose hand-off check FAILed: a waiter left waiting
// for a free lock, the run's step that awaited it gone otherwise.
func stranded() models.Report {
	rep := report(models.Pass, models.Fail)
	rep.HandOff = models.Verdict{Check: "hand-off", Result: models.Fail}
	return rep
}

// lapsed is rep in a run whose environment took a holder's lease away.
func lapsed(rep models.Report) models.Report {
	rep.Environment = models.Verdict{Check: "environment", Result: models.Error, Explanation: "The environment let a renewed lease lapse: …"}
	return rep
}

// Each rule of the judgement, in both directions: only a caught violation
// matches a documented FAIL; too little progress, a vacuous schedule, a run
// that went wrong never match; a moot lesson is skipped, however its later
// steps went, unless a check caught a violation; a violation caught
// where a PASS is documented, in a run whose environment lapsed a renewed
// lease, is ERROR (never FAIL UNEXPECTED, never PASS), and so is too little
// progress in a run the environment cut short.
func TestJudge(t *testing.T) {
	happened := []models.EffectResult{{Name: "e", Happened: true}}
	missing := []models.EffectResult{{Name: "e", Missing: "no pause"}}
	moot := []models.EffectResult{{Name: "e", Missing: "x", Moot: "one lease per grant"}}
	for _, tc := range []struct {
		name    string
		rep     models.Report
		effects []models.EffectResult
		runErr  string
		expect  models.Expect
		verdict models.Result
		matches bool
		skipped bool
	}{
		{"pass as documented", report(models.Pass, models.Pass), happened, "", models.ExpectPass, models.Pass, true, false},
		{"a documented fail caught", report(models.Fail, models.Pass), happened, "", models.ExpectFail, models.Fail, true, false},
		{"a documented fail not caught", report(models.Pass, models.Pass), happened, "", models.ExpectFail, models.Pass, false, false},
		{"an unexpected fail", report(models.Fail, models.Pass), happened, "", models.ExpectPass, models.Fail, false, false},
		{"too little progress", report(models.Pass, models.Fail), happened, "", models.ExpectPass, models.Fail, false, false},
		{"too little progress, any expected", report(models.Pass, models.Fail), happened, "", models.ExpectAny, models.Fail, false, false},
		{"vacuous", report(models.Pass, models.Pass), missing, "", models.ExpectPass, models.Error, false, false},
		{"vacuous but caught", report(models.Fail, models.Pass), missing, "", models.ExpectFail, models.Fail, true, false},
		{"the run went wrong", report(models.Pass, models.Pass), happened, "step 3 failed", models.ExpectPass, models.Error, false, false},
		{"went wrong but caught", report(models.Fail, models.Pass), happened, "step 3 failed", models.ExpectFail, models.Fail, true, false},
		{"moot", report(models.Pass, models.Pass), moot, "", models.ExpectPass, "", false, true},
		{"moot, and the steps after went otherwise", report(models.Pass, models.Pass), moot, "step 5 failed", models.ExpectPass, "", false, true},
		{"moot but caught", report(models.Fail, models.Pass), moot, "step 5 failed", models.ExpectPass, models.Fail, false, false},
		{"undecided", report(models.Unknown, models.Pass), happened, "", models.ExpectAny, models.Unknown, false, false},
		{"an unexpected fail where the environment lapsed a lease", lapsed(report(models.Fail, models.Pass)), happened, "", models.ExpectPass, models.Error, false, false},
		{"a documented fail where the environment lapsed a lease", lapsed(report(models.Fail, models.Pass)), happened, "", models.ExpectFail, models.Fail, true, false},
		{"a documented wedge caught", wedged(), happened, "step 3 timed out", models.ExpectFail, models.Fail, true, false},
		{"an unexpected wedge", wedged(), happened, "", models.ExpectPass, models.Fail, false, false},
		// A step gone otherwise because of the lock is its FAIL, not ERROR;
		// a lock that grants nothing fails hand-off in any lesson, so it
		// matches nothing, not even a documented FAIL.
		{"a waiter left waiting", stranded(), happened, "step 5 timed out", models.ExpectPass, models.Fail, false, false},
		{"a waiter left waiting where a FAIL is documented", stranded(), happened, "step 5 timed out", models.ExpectFail, models.Fail, false, false},
		{"a wedge where the resource's fate is timing's", wedged(), happened, "", models.ExpectAny, models.Fail, false, false},
		{"too little progress where the environment cut the run short", lapsed(report(models.Pass, models.Fail)), happened, "", models.ExpectPass, models.Error, false, false},
		{"too little progress where a fail was documented and the environment cut the run short", lapsed(report(models.Pass, models.Fail)), happened, "", models.ExpectFail, models.Error, false, false},
		{"a pass where the environment lapsed a lease", lapsed(report(models.Pass, models.Pass)), happened, "", models.ExpectPass, models.Pass, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := models.Judge(tc.rep, tc.effects, tc.runErr, tc.expect)
			assert.Equal(t, tc.verdict, j.Verdict)
			assert.Equal(t, tc.matches, j.Matches)
			assert.Equal(t, tc.skipped, j.Skipped != "")
		})
	}
}

// An effect this locklab does not know never counts as happened: the
// history cannot be judged to have exercised it.
func TestUnknownEffectIsNotHappened(t *testing.T) {
	res := models.CheckEffects([]history.Effect{{Kind: "melted"}}, nil)
	assert.False(t, res[0].Happened)
	assert.Contains(t, models.Vacuous(res), `unknown effect "melted"`)
}

// A FAIL that only the progress check gave is shown as too little
// progress, never as a safety failure; one that a safety or liveness check
// gave is shown as FAIL, whatever the belief says.
func TestTooLittleProgressIsShownAsSuch(t *testing.T) {
	short := report(models.Pass, models.Fail)
	short.Belief = models.Verdict{Check: "mutex", Result: models.Fail}
	assert.Equal(t, "FAIL (too little progress)", models.Shown(models.Fail, short.Verdicts()))
	assert.True(t, models.TooLittleProgress(models.Fail, short.Verdicts()))
	for name, rep := range map[string]models.Report{
		"a safety check caught it": report(models.Fail, models.Fail),
		"a wedge":                  wedged(),
	} {
		assert.Equal(t, "FAIL", models.Shown(models.Fail, rep.Verdicts()), name)
	}
	assert.Equal(t, "ERROR", models.Shown(models.Error, short.Verdicts()), "an ERROR stays one")
	assert.False(t, models.TooLittleProgress(models.Pass, report(models.Pass, models.Pass).Verdicts()))
}
