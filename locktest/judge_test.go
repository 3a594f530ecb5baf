package locktest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// constantToken is a result of a lock whose every grant carries token 1.
func constantToken(scenario, resource string, seed uint64) scenarios.Result {
	return scenarios.Result{Scenario: scenario, Lock: Name, Resource: resource, Seed: seed,
		Expected: scenarios.ExpectPass, Verdict: models.Fail,
		Error: "s.txt:41: acquire c2: got \"c2: granted token=t1\", script says \"c2: granted token=t2\"",
		Checks: []models.Verdict{
			{Check: "tokens", Result: models.Fail, Explanation: "Two grants carry the same fencing token 1: a fenced resource could not tell their writes apart.",
				Evidence: []string{"c1 acquire → ok token=1", "c2 acquire → ok token=1"}},
			{Check: "mutex", Result: models.Fail, Explanation: "Two clients believed they held the lock at the same time."},
		}}
}

// A failed gate explains a finding once, with what to change; the same
// finding on another seed is one line naming the first; the same
// explanation in another scenario is not repeated; and the summary lists
// every configuration once, with its seeds and the remedy per check.
func TestAFailedGateSaysEachFindingOnce(t *testing.T) {
	g := newGate()
	var fails []string
	for _, sc := range []string{"paused-holder", "stale-release"} {
		for seed := uint64(1); seed <= 3; seed++ {
			j := g.judge(constantToken(sc, "fenced", seed), "go test -run X", "index.html")
			require.NotEmpty(t, j.fail)
			fails = append(fails, j.fail)
		}
	}
	ok := constantToken("contention", "fenced", 1)
	ok.Verdict, ok.Matches, ok.Checks = models.Pass, true, nil
	assert.Empty(t, g.judge(ok, "", "").fail)

	first := fails[0]
	assert.Contains(t, first, "paused-holder × lock-under-test × fenced, seed 1: FAIL, documented PASS")
	assert.Contains(t, first, "tokens FAIL: Two grants carry the same fencing token 1")
	assert.Contains(t, first, "what to change (tokens): Grant.Token must be the create revision")
	assert.Contains(t, first, "the same schedule again: go test -run X")
	assert.NotContains(t, first, "mutex FAIL", "the belief is a finding, not why a gate fails")
	assert.NotContains(t, first, "index.html", "no report path unless go test -artifacts keeps it")
	assert.Equal(t, "paused-holder × lock-under-test × fenced, seed 2: FAIL, documented PASS: the same finding as fenced seed 1 (tokens)", fails[1])
	other := fails[3]
	assert.Contains(t, other, "tokens FAIL: as explained for paused-holder × fenced seed 1")
	assert.NotContains(t, other, "what to change", "a remedy is shown once per gate")

	sum := g.summary()
	assert.Contains(t, sum, "locktest summary: 6 of 7 results not as documented")
	assert.Regexp(t, `paused-holder\s+lock-under-test\s+fenced\s+3 of 3\s+tokens\s+Two grants carry the same fencing token 1`, sum)
	assert.Regexp(t, `stale-release\s+lock-under-test\s+fenced\s+3 of 3\s+tokens`, sum)
	assert.NotContains(t, sum, "contention", "a configuration as documented is not in the summary")
	assert.Equal(t, 1, strings.Count(sum, "what to change (tokens)"))
}

// Past the first few distinct findings a failure is one line; a passing
// gate has no summary.
func TestManyFindingsAreALineEach(t *testing.T) {
	g := newGate()
	assert.Empty(t, g.summary())
	var last string
	for i := range maxExplained + 2 {
		r := constantToken(fmt.Sprintf("s%d", i), "fenced", 1)
		r.Checks[0].Explanation += fmt.Sprintf(" (%d)", i)
		last = g.judge(r, "go test -run X", "").fail
	}
	assert.Equal(t, "s9 × lock-under-test × fenced, seed 1: FAIL, documented PASS: tokens: "+
		"Two grants carry the same fencing token 1: a fenced resource could not tell their writes apart. (again: go test -run X)", last)
}
