package scenarios_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/scenarios"
)

// A busy machine — a CI runner beside other jobs — can lapse a lease its
// lock kept renewing, or starve a step past its deadline, on every attempt
// of a configuration (see scenarios.Result.Environmental): the result is
// then the environment's ERROR, with its evidence, and says nothing of the
// lock or the lab. The tests log such a result as not judged instead of
// failing on it, unless its lesson documents a FAIL (a known-bad lock is
// caught on every seed, however busy the machine), or more than a tenth
// of a test's results went so (the machine judged too little: that is a
// failure too).

// matches asserts that r matches its expectation, or logs it as not
// judged when the environment, not the lock, decided it; it reports
// whether r was judged.
func matches(t *testing.T, r scenarios.Result) bool {
	t.Helper()
	name := fmt.Sprintf("%s × %s × %s seed %d", r.Scenario, r.Lock, r.Resource, r.Seed)
	if why := r.Environmental(); why != "" && r.Expected != scenarios.ExpectFail {
		t.Logf("not judged: %s: %s (attempts before: %v)", name, why, r.Retried)
		return false
	}
	assert.True(t, r.Matches, "%s: got %s, expected %s (%s)", name, r.Verdict, r.Expected, r.Error)
	return true
}

// allMatch asserts matches for every result of a run, and that the machine
// judged at least nine in ten of them; it returns how many it did not
// judge.
func allMatch(t *testing.T, rs []scenarios.Result) int {
	t.Helper()
	unjudged := 0
	for _, r := range rs {
		if !matches(t, r) {
			unjudged++
		}
	}
	enough(t, unjudged, len(rs))
	return unjudged
}

// enough asserts that a busy machine left at most a tenth of n results
// (and at least one) unjudged.
func enough(t *testing.T, unjudged, n int) {
	t.Helper()
	assert.LessOrEqual(t, unjudged, max(1, n/10),
		"the environment decided %d of %d results: too busy a machine to judge the lab on", unjudged, n)
}

// unjudgedMark stands for a verdict the environment decided, in tests that
// compare two runs' verdicts.
const unjudgedMark = "not judged (environment)"

// compareJudged makes two runs' verdicts, by configuration, comparable
// where both were judged: a configuration either run did not judge is
// marked so in both. It returns how many results it marked.
func compareJudged(a, b map[string]string) int {
	n := 0
	for k := range a {
		if a[k] == unjudgedMark || b[k] == unjudgedMark {
			n += 2
			a[k], b[k] = unjudgedMark, unjudgedMark
		}
	}
	return n
}
