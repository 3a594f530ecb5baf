package reports

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/models"
)

// With several seeds, a matrix cell shows the worst of them and on how many
// seeds it came — never the last seed's verdict alone.
func TestAMatrixCellShowsItsWorstSeed(t *testing.T) {
	pass := Run{Verdict: models.Pass, Matches: true}
	fail := Run{Verdict: models.Fail, Checks: []models.Verdict{{Check: beliefCheck, Result: models.Fail}}}
	errored := Run{Verdict: models.Error, Matches: true}
	skipped := Run{Verdict: models.Pass, Skipped: "does not apply"}
	interrupted := Run{Skipped: "interrupted", Interrupted: true}
	little := Run{Verdict: models.Fail, Progress: models.Fail}
	for _, tc := range []struct {
		rs   []Run
		want string
	}{
		{[]Run{pass, pass, pass}, "PASS"},
		{[]Run{pass, fail, pass}, "FAIL!* 1/3"},
		{[]Run{fail, errored}, "FAIL!* 1/2"},
		{[]Run{pass, errored}, "ERROR 1/2"},
		{[]Run{skipped, pass}, "PASS 1/2"},
		{[]Run{skipped}, "skipped"},
		{[]Run{interrupted}, "interrupted"},
		{[]Run{little}, "FAIL!(progress)"},
	} {
		var at []int
		for i := range tc.rs {
			at = append(at, i)
		}
		assert.Equal(t, tc.want, cellOf(tc.rs, at).Text)
	}
}

// Locks whose cells say the same share a row, which names them and keeps
// every run of each cell; a lock that differs has a row of its own.
func TestLocksWithTheSameVerdictsShareARow(t *testing.T) {
	var runs []Run
	for _, l := range []string{"a", "b", "c"} {
		for _, res := range []string{"unfenced", "fenced"} {
			r := Run{Scenario: "s", Lock: l, Resource: res, Verdict: models.Pass, Matches: true}
			if l == "c" && res == "fenced" {
				r.Verdict, r.Matches = models.Fail, false
			}
			runs = append(runs, r, r) // two seeds
		}
	}
	m := Group(runs)
	assert.Equal(t, []string{"unfenced", "fenced"}, m.Resources)
	require.Len(t, m.Rows, 2)
	assert.Equal(t, []string{"a", "b"}, m.Rows[0].Locks)
	assert.Equal(t, "a, b", m.Rows[0].Who())
	assert.Equal(t, []int{0, 1, 4, 5}, m.Rows[0].Cells[0].Runs)
	assert.Equal(t, "ok", m.Rows[0].Cells[1].Class)
	assert.Equal(t, "FAIL!", m.Rows[1].Cells[1].Text)
	assert.Equal(t, "bad", m.Rows[1].Cells[1].Class)
	assert.Equal(t, "c", m.Rows[1].Who())

	all := Group(runs[:8])
	require.Len(t, all.Rows, 1)
	assert.Equal(t, "all 2 locks", all.Rows[0].Who())
}
