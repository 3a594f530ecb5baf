package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// With several seeds, a matrix cell shows the worst of them and on how many
// seeds it came — never the last seed's verdict alone.
func TestAMatrixCellShowsItsWorstSeed(t *testing.T) {
	pass := scenarios.Result{Verdict: models.Pass, Matches: true}
	fail := scenarios.Result{Verdict: models.Fail, Matches: false, Belief: "FAIL"}
	errored := scenarios.Result{Verdict: models.Error, Matches: true}
	skipped := scenarios.Result{Verdict: models.Pass, Skipped: "does not apply"}
	for _, tc := range []struct {
		rs   []scenarios.Result
		want string
	}{
		{[]scenarios.Result{pass, pass, pass}, "PASS"},
		{[]scenarios.Result{pass, fail, pass}, "FAIL!* 1/3"},
		{[]scenarios.Result{fail, errored}, "FAIL!* 1/2"},
		{[]scenarios.Result{pass, errored}, "ERROR 1/2"},
		{[]scenarios.Result{skipped, pass}, "PASS 1/2"},
		{[]scenarios.Result{skipped}, "skipped"},
	} {
		assert.Equal(t, tc.want, cellOf(tc.rs))
	}
}
