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
