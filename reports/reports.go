package reports

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/atomicfile"
	"github.com/locklab/locklab/models"
)

// Report is what a report shows.
type Report struct {
	// Title heads the page ("locklab run").
	Title string
	// Command is the command line that produced the results.
	Command string
	// Complete is false for an interrupted or partial run: the page says so
	// at the top, in red.
	Complete bool
	// Seconds is how long the whole run took.
	Seconds float64
	// Runs are the results, one per scenario × lock × resource × seed.
	Runs []Run
}

// Run is one result.
type Run struct {
	Scenario, Lock, Resource string
	Seed                     uint64
	// Expected is the documented verdict (PASS, FAIL, ANY).
	Expected string
	// Verdict is PASS, FAIL, UNKNOWN or ERROR; Matches says whether it is
	// the documented one.
	Verdict models.Result
	Matches bool
	// Skipped says why the run did not happen ("" if it did).
	Skipped string
	// Interrupted says the run was stopped (Ctrl-C) before it ended:
	// Skipped says "interrupted", and it is counted as interrupted.
	Interrupted bool
	// Error says why the verdict is ERROR, or notes a difference.
	Error string
	// Retried lists earlier attempts of the run, made again because the
	// environment took a holder's lease away.
	Retried []string
	// LeaseScale, when set, is how many times as long as the lesson writes
	// them the leases of the last attempt were (scenarios.Result.LeaseScale).
	LeaseScale int
	// Progress is the minimum-progress check's result (FAIL: too little
	// happened to judge the lock).
	Progress models.Result
	// Checks are the verdicts of every check.
	Checks []models.Verdict
	// Effects are what the scenario claims happens, and whether it did.
	Effects []Effect
	// Lesson is the scenario's lesson.
	Lesson string
	// Replay is the command that re-runs it.
	Replay string
	// History is the history file's path, relative to the report's
	// directory ("" if none was kept); Events its events.
	History string
	Events  []history.Event
	Seconds float64
}

// Effect is one claimed effect of a run's scenario.
type Effect struct {
	Name     string
	Happened bool
	Missing  string
}

// Files are the names Write writes, in dir.
const (
	IndexFile   = "index.html"
	SummaryFile = "summary.md"
	JUnitFile   = "junit.xml"
)

// Write writes index.html, summary.md and junit.xml to dir, each
// atomically, and, for every failed linearizability check, Porcupine's own
// view of it beside the run's history (linked from the page). A report of
// more than a dozen runs gives each run a page of its own, beside its
// history (or under runs/), written before the index that links them; the
// index then shows the matrix, a filter, the runs not as documented in
// full, and a line per run.
func Write(dir string, r Report) error {
	views := porcupineViews(dir, r.Runs)
	return errors.Join(
		atomicfile.Write(filepath.Join(dir, IndexFile), func(w io.Writer) error {
			return writePages(r, views, w, func(rel string, write func(io.Writer) error) error {
				file := filepath.Join(dir, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					return err
				}
				return atomicfile.Write(file, write)
			})
		}),
		atomicfile.Write(filepath.Join(dir, SummaryFile), func(w io.Writer) error { return writeMarkdown(w, r) }),
		atomicfile.Write(filepath.Join(dir, JUnitFile), func(w io.Writer) error { return writeJUnit(w, r) }),
	)
}

// porcupineViews writes Porcupine's visualization of each failed
// linearizability check (the histories are checked again: the views are not
// kept in results) and returns their paths relative to dir, by run index
// and check name. A view that cannot be written is left out.
func porcupineViews(dir string, runs []Run) map[int]map[string]string {
	out := map[int]map[string]string{}
	for i, r := range runs {
		if r.History == "" || len(r.Events) == 0 || !slices.ContainsFunc(r.Checks, failedLinearizability) {
			continue
		}
		rep, err := models.Check(history.Header{}, r.Events, 0)
		if err != nil {
			continue
		}
		for _, v := range rep.Verdicts() {
			if v.Result != models.Fail || !v.HasVisualization() {
				continue
			}
			rel := strings.TrimSuffix(r.History, ".history.jsonl") + "." + v.Check + ".porcupine.html"
			if v.WriteVisualization(filepath.Join(dir, rel)) != nil {
				continue
			}
			if out[i] == nil {
				out[i] = map[string]string{}
			}
			out[i][v.Check] = rel
		}
	}
	return out
}

// beliefCheck is the mutex model's check: whether two clients believed
// they held the lock at once.
const beliefCheck = "mutex"

// failedLinearizability: a Porcupine check (counter, mutex) FAILed.
func failedLinearizability(v models.Verdict) bool {
	return v.Result == models.Fail && (v.Check == "counter" || v.Check == beliefCheck)
}

// order lists the runs' indexes failures first: runs not as documented,
// then FAILs and ERRORs as documented, then the rest; catalog order within.
func order(runs []Run) []int {
	idx := make([]int, len(runs))
	for i := range idx {
		idx[i] = i
	}
	rank := func(r Run) int {
		switch {
		case r.Skipped != "":
			return 3
		case !r.Matches:
			return 0
		case r.Verdict == models.Fail || r.Verdict == models.Error:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(idx, func(a, b int) int { return rank(runs[a]) - rank(runs[b]) })
	return idx
}

// firstFailure is the explanation of a run's first failed check, or its
// error, in one line.
func firstFailure(r Run) string {
	if r.Skipped != "" {
		return "skipped: " + r.Skipped
	}
	if r.Verdict == models.Error && r.Error != "" {
		return firstLine(r.Error)
	}
	for _, v := range r.Checks {
		if v.Check == beliefCheck {
			continue // a finding beside the verdict, never its reason
		}
		if v.Result == models.Fail || v.Result == models.Unknown {
			return fmt.Sprintf("%s %s: %s", v.Check, v.Result, firstSentence(v.Explanation))
		}
	}
	if r.Error != "" {
		return firstLine(r.Error)
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// status is a run's cell text: the verdict, marked when it is not the
// documented one.
func status(r Run) string {
	switch {
	case r.Skipped != "":
		return "skipped"
	case !r.Matches:
		return string(r.Verdict) + "!"
	}
	return string(r.Verdict)
}
