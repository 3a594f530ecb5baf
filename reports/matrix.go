package reports

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/models"
)

// Matrix is the verdict matrix as the console and the index show it: a row
// per lesson, a column per resource, and the locks whose verdicts a row
// shows — locks with the same verdicts share a row, so a run of many locks
// stays a page long and a lock that differs stands out on a row of its own.
type Matrix struct {
	Resources []string
	Rows      []MatrixRow
}

// MatrixRow is one lesson's row: its cells, one per resource, and the
// locks they are the verdicts of.
type MatrixRow struct {
	Scenario string
	Cells    []MatrixCell
	Locks    []string
	// AllLocks: every lock the lesson ran shares the row.
	AllLocks bool
}

// Who names the row's locks: "all N locks" when every lock shares it.
func (r MatrixRow) Who() string {
	if r.AllLocks && len(r.Locks) > 1 {
		return fmt.Sprintf("all %d locks", len(r.Locks))
	}
	return strings.Join(r.Locks, ", ")
}

// MatrixCell is the verdict of a row's locks on one resource, over every
// seed: the worst of them (one not as documented first, then ERROR, FAIL,
// UNKNOWN, PASS, skipped), "!" after one not as documented, "*" when two
// clients believed they held the lock at once (a finding), and on how many
// seeds it came where they differ ("FAIL! 1/3"). Empty: not run there.
type MatrixCell struct {
	Text string
	// Class is how a page colours it: ok, caught (a documented FAIL), bad
	// (not as documented), skip.
	Class string
	// Runs are the indexes of its runs in the runs given to Group.
	Runs []int
}

// Group makes the matrix of runs.
func Group(runs []Run) Matrix {
	var m Matrix
	var scens []string
	locksOf := map[string][]string{}
	byCell := map[[3]string][]int{} // scenario, lock, resource → runs
	for i, r := range runs {
		if locksOf[r.Scenario] == nil {
			scens = append(scens, r.Scenario)
		}
		if !slices.Contains(locksOf[r.Scenario], r.Lock) {
			locksOf[r.Scenario] = append(locksOf[r.Scenario], r.Lock)
		}
		if !slices.Contains(m.Resources, r.Resource) {
			m.Resources = append(m.Resources, r.Resource)
		}
		k := [3]string{r.Scenario, r.Lock, r.Resource}
		byCell[k] = append(byCell[k], i)
	}
	for _, s := range scens {
		var rows []MatrixRow
		for _, l := range locksOf[s] {
			var cells []MatrixCell
			for _, res := range m.Resources {
				cells = append(cells, cellOf(runs, byCell[[3]string{s, l, res}]))
			}
			at := slices.IndexFunc(rows, func(r MatrixRow) bool { return sameTexts(r.Cells, cells) })
			if at < 0 {
				rows = append(rows, MatrixRow{Scenario: s, Cells: cells})
				at = len(rows) - 1
			} else {
				for c := range cells {
					rows[at].Cells[c].Runs = append(rows[at].Cells[c].Runs, cells[c].Runs...)
				}
			}
			rows[at].Locks = append(rows[at].Locks, l)
		}
		for i := range rows {
			rows[i].AllLocks = len(rows[i].Locks) == len(locksOf[s])
		}
		m.Rows = append(m.Rows, rows...)
	}
	return m
}

func sameTexts(a, b []MatrixCell) bool {
	return slices.EqualFunc(a, b, func(x, y MatrixCell) bool { return x.Text == y.Text })
}

// cellOf is the cell of one lock's runs on one resource (at, indexes into
// runs), over its seeds.
func cellOf(runs []Run, at []int) MatrixCell {
	if len(at) == 0 {
		return MatrixCell{}
	}
	worst, believed := runs[at[0]], false
	for _, i := range at {
		if severity(runs[i]) > severity(worst) {
			worst = runs[i]
		}
		believed = believed || Believed(runs[i])
	}
	text, same := cellText(worst), 0
	for _, i := range at {
		if cellText(runs[i]) == text {
			same++
		}
	}
	if believed {
		text += "*"
	}
	if same < len(at) {
		text += fmt.Sprintf(" %d/%d", same, len(at))
	}
	return MatrixCell{Text: text, Class: class(worst), Runs: slices.Clone(at)}
}

// cellText is one run's verdict as a cell says it.
func cellText(r Run) string {
	switch {
	case r.Interrupted:
		return "interrupted"
	case r.Skipped != "":
		return "skipped"
	case r.Progress == models.Fail && !r.Matches:
		return string(r.Verdict) + "!(progress)"
	case !r.Matches:
		return string(r.Verdict) + "!"
	}
	return string(r.Verdict)
}

// severity orders runs for a cell: skipped, PASS, UNKNOWN, FAIL, ERROR,
// and any not as documented above them all.
func severity(r Run) int {
	n := slices.Index([]models.Result{models.Pass, models.Unknown, models.Fail, models.Error}, r.Verdict) + 1
	if r.Skipped != "" {
		return 0
	}
	if !r.Matches {
		n += 10
	}
	return n
}

// Believed reports whether two clients believed they held the lock at once
// in run r (the mutex model's FAIL: a finding, not the verdict).
func Believed(r Run) bool {
	return slices.ContainsFunc(r.Checks, func(v models.Verdict) bool { return v.Check == beliefCheck && v.Result == models.Fail })
}
