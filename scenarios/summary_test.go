package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/models"
)

// A run whose every configuration was skipped tested nothing: it does not
// pass (3, undecided); one that ran something is judged by what ran.
func TestARunOfNothingButSkipsDoesNotPass(t *testing.T) {
	skipped := Result{Scenario: "s", Lock: "redis-setnx", Resource: "fenced", Skipped: "redis-server is not installed"}
	passed := Result{Scenario: "s", Lock: "queue", Resource: "fenced", Verdict: models.Pass, Matches: true}
	assert.Equal(t, 3, Summary{Complete: true, Results: []Result{skipped, skipped}}.ExitCode())
	assert.True(t, Summary{Results: []Result{skipped}}.NothingRan())
	assert.Equal(t, 0, Summary{Complete: true, Results: []Result{skipped, passed}}.ExitCode())
	assert.False(t, Summary{}.NothingRan(), "no results at all is another error (nothing to run)")
}

// A configuration the environment kept from being judged on its last
// attempt is neither as expected nor the lock's finding: the run does not
// pass (3, undecided), and a real mismatch beside it still says 1, as does
// a caught FAIL the environment also touched.
func TestANotJudgedConfigurationDoesNotPass(t *testing.T) {
	env := models.Verdict{Check: "environment", Result: models.Error,
		Explanation: "The environment let a renewed lease lapse: c2's lease ended. The machine was too slow."}
	unjudged := Result{Scenario: "contention", Lock: "queue", Resource: "fenced", Verdict: models.Error,
		Checks: []models.Verdict{env}}
	passed := Result{Scenario: "s", Lock: "queue", Resource: "fenced", Verdict: models.Pass, Matches: true}
	failed := Result{Scenario: "s", Lock: "queue", Resource: "unfenced", Verdict: models.Fail}
	assert.Equal(t, "The environment let a renewed lease lapse: c2's lease ended", unjudged.Environmental())
	assert.Equal(t, 3, Summary{Complete: true, Results: []Result{passed, unjudged}}.ExitCode())
	assert.Equal(t, 1, Summary{Complete: true, Results: []Result{unjudged, failed}}.ExitCode())
	matched := unjudged
	matched.Matches = true
	assert.Empty(t, matched.Environmental(), "a result that matches was judged")
	caught := unjudged
	caught.Verdict = models.Fail
	assert.False(t, caught.NotJudged(), "a check that caught the lock failing is a finding, however busy the machine")
	assert.Equal(t, 1, Summary{Complete: true, Results: []Result{passed, caught}}.ExitCode())
}
