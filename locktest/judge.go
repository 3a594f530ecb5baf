package locktest

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// gate is what one Run has judged so far: enough to show a finding once
// in full and its repeats in a line, and to end a failed gate with one
// table.
type gate struct {
	// shown is where each finding (see finding) was first shown in full.
	shown map[string]string
	// remedied are the checks whose remedy was shown already.
	remedied map[string]bool
	// explained says where each check's explanation, word for word, was
	// shown first.
	explained map[string]string
	// rows are the configurations judged, in the order first judged.
	rows []*row
	// judged counts the results judged, and matched those as documented.
	judged, matched int
	// explored is the exploration's failure, if it found one.
	explored string
}

// row is one scenario × lock × resource, over its seeds.
type row struct {
	scenario, lock, resource string
	failed, seeds            int
	check, why               string
}

func newGate() *gate {
	return &gate{shown: map[string]string{}, remedied: map[string]bool{}, explained: map[string]string{}}
}

// judgement is what one result's subtest says: skipped, a finding logged,
// or a failure.
type judgement struct {
	name string // lock/resource/seed
	skip string
	logs []string
	fail string
}

// report says j on its subtest.
func (j judgement) report(t *testing.T) {
	for _, l := range j.logs {
		t.Log(l)
	}
	if j.fail != "" {
		t.Error(j.fail)
	}
	if j.skip != "" {
		t.Skip(j.skip)
	}
}

// judge judges one result: skipped, as documented (a documented FAIL or a
// belief logged as a finding), or a failure that shows its explanation
// once — the same finding on another seed or resource says which it is
// the same as.
func (g *gate) judge(r scenarios.Result, rerun, report string) judgement {
	j := judgement{name: fmt.Sprintf("%s/%s/%d", r.Lock, r.Resource, r.Seed)}
	switch {
	case r.Skipped != "":
		j.skip = "skipped: " + r.Skipped
		return j
	case r.Matches && r.Verdict == models.Fail:
		j.logs = append(j.logs, fmt.Sprintf("finding (documented %s for %s × %s): %s", r.Expected, r.Scenario, r.Resource, explain(r)))
	case r.Matches && r.Belief == models.Fail:
		j.logs = append(j.logs, "finding: two clients believed they held the lock at once (the resource stayed safe)")
	}
	g.judged++
	g.count(r)
	if r.Matches {
		g.matched++
		return j
	}
	head := fmt.Sprintf("%s × %s × %s, seed %d: %s, documented %s", r.Scenario, r.Lock, r.Resource, r.Seed,
		models.Shown(r.Verdict, r.Checks), r.Expected)
	key := finding(r)
	if first, ok := g.shown[key]; ok {
		what := failedChecks(r)
		if len(what) == 0 {
			what = []string{string(r.Verdict)}
		}
		j.fail = fmt.Sprintf("%s: the same finding as %s (%s)", head, first, strings.Join(what, ", "))
		return j
	}
	g.shown[key] = fmt.Sprintf("%s seed %d", r.Resource, r.Seed)
	if len(g.shown) > maxExplained {
		// The summary at the end lists every finding: past the first few,
		// a finding is its check and why, in a line.
		check, why := firstFailure(r)
		j.fail = fmt.Sprintf("%s: %s: %s (again: %s)", head, check, why, rerun)
		return j
	}
	msg := []string{head, g.explain(r)}
	for _, c := range failedChecks(r) {
		if rem := models.Remedy(c); rem != "" && !g.remedied[c] {
			g.remedied[c] = true
			msg = append(msg, "what to change ("+c+"): "+rem)
		}
	}
	msg = append(msg, "the same schedule again: "+rerun+" (the seed is fixed by the options)")
	if artifactsKept() {
		msg = append(msg, "report: "+report)
	}
	j.fail = strings.Join(msg, "\n")
	return j
}

// count adds r to its configuration's row: a seed judged, and failed if r
// is not as documented.
func (g *gate) count(r scenarios.Result) {
	i := slices.IndexFunc(g.rows, func(w *row) bool {
		return w.scenario == r.Scenario && w.lock == r.Lock && w.resource == r.Resource
	})
	if i < 0 {
		g.rows = append(g.rows, &row{scenario: r.Scenario, lock: r.Lock, resource: r.Resource})
		i = len(g.rows) - 1
	}
	w := g.rows[i]
	w.seeds++
	if !r.Matches {
		w.failed++
		if w.check == "" {
			w.check, w.why = firstFailure(r)
		}
	}
}

// summary is the table that ends a failed gate: every configuration not as
// documented, on how many seeds, the check and one line why; then what to
// change, a line per check.
func (g *gate) summary() string {
	var rows []*row
	for _, w := range g.rows {
		if w.failed > 0 {
			rows = append(rows, w)
		}
	}
	if len(rows) == 0 && g.explored == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "locktest summary: %d of %d results not as documented", g.judged-g.matched, g.judged)
	tab := [][]string{{"scenario", "lock", "resource", "seeds failed", "check", "why"}}
	checks := []string{}
	for _, w := range rows {
		tab = append(tab, []string{w.scenario, w.lock, w.resource, fmt.Sprintf("%d of %d", w.failed, w.seeds), w.check, w.why})
		if !slices.Contains(checks, w.check) {
			checks = append(checks, w.check)
		}
	}
	if g.explored != "" {
		tab = append(tab, []string{"explore", Name, "-", "-", "drawn script", g.explored})
	}
	writeTable(&b, tab)
	for _, c := range checks {
		if rem := models.Remedy(c); rem != "" {
			fmt.Fprintf(&b, "\nwhat to change (%s): %s", c, rem)
		}
	}
	if !artifactsKept() {
		b.WriteString("\nreports: go test -artifacts keeps each scenario's report (index.html) under _artifacts/")
	}
	return b.String()
}

// writeTable writes rows as aligned columns, each row on a line of its
// own.
func writeTable(b *strings.Builder, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r[:len(r)-1] {
			width[i] = max(width[i], len(c))
		}
	}
	for _, r := range rows {
		b.WriteString("\n")
		for i, c := range r[:len(r)-1] {
			fmt.Fprintf(b, "%-*s  ", width[i], c)
		}
		b.WriteString(r[len(r)-1])
	}
}

// finding is what makes two results the same finding: the scenario, the
// lock, the verdict and the checks that failed (the numbers in their
// explanations differ from seed to seed).
func finding(r scenarios.Result) string {
	return strings.Join(append([]string{r.Scenario, r.Lock, string(r.Verdict)}, failedChecks(r)...), "|")
}

// failedChecks are the checks of r that did not pass, by name; the
// belief (mutex) is a finding, never a failure.
func failedChecks(r scenarios.Result) []string {
	var out []string
	for _, v := range r.Checks {
		if bad(v.Result) && v.Check != belief {
			out = append(out, v.Check)
		}
	}
	return out
}

// firstFailure is the check that decided r and the first sentence of why,
// for the summary.
func firstFailure(r scenarios.Result) (check, why string) {
	for _, v := range r.Checks {
		if bad(v.Result) && v.Check != belief {
			return v.Check, firstLine(v.Explanation)
		}
	}
	switch {
	case r.Error != "":
		return "error", firstLine(r.Error)
	case r.Verdict == models.Pass:
		return "-", "passed where the catalog documents " + string(r.Expected)
	}
	return "-", string(r.Verdict)
}

// belief is the check that answers whether two clients believed they held
// the lock at once.
const belief = "mutex"

func bad(r models.Result) bool {
	return r == models.Fail || r == models.Unknown || r == models.Error
}

// firstLine is s up to its first line break or sentence end, at most 110
// characters.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i+1]
	}
	if len(s) > 110 {
		s = s[:107] + "..."
	}
	return s
}

// explain is why a result is what it is: its error, or its failed checks.
func explain(r scenarios.Result) string {
	return (&gate{}).explain(r)
}

// maxSteps is how many of a run's mismatched steps a failure shows, and
// maxExplained how many distinct findings of a gate are explained in
// full (the rest in a line each; the summary lists them all).
const (
	maxSteps     = 3
	maxExplained = 8
)

// explain is why a result is what it is: its error (at most maxSteps
// mismatched steps), its failed checks with their evidence, and the
// effects that did not happen. A check whose explanation g showed already,
// word for word, is named with where it was shown.
func (g *gate) explain(r scenarios.Result) string {
	var lines []string
	if r.Error != "" {
		steps := strings.Split(r.Error, "\n")
		if len(steps) > maxSteps {
			steps = append(steps[:maxSteps], fmt.Sprintf("(and %d more steps not as the script says)", len(steps)-maxSteps))
		}
		lines = append(lines, steps...)
	}
	for _, v := range r.Checks {
		if !bad(v.Result) || (v.Check == belief && !r.Matches) {
			continue // a failure's explanation is the failed checks'; the belief is a finding
		}
		said := v.Check + "\x00" + v.Explanation
		if where, ok := g.explained[said]; ok {
			lines = append(lines, fmt.Sprintf("%s %s: as explained for %s", v.Check, v.Result, where))
			continue
		}
		if g.explained != nil {
			g.explained[said] = fmt.Sprintf("%s × %s seed %d", r.Scenario, r.Resource, r.Seed)
		}
		lines = append(lines, fmt.Sprintf("%s %s: %s", v.Check, v.Result, v.Explanation))
		for _, e := range v.Evidence {
			lines = append(lines, "    "+e)
		}
	}
	for _, ef := range r.Effects {
		if !ef.Happened {
			lines = append(lines, "did not happen: "+ef.Name+": "+ef.Missing)
		}
	}
	if len(lines) == 0 {
		return "no check failed"
	}
	return strings.Join(lines, "\n")
}

// artifactsKept reports whether go test keeps the artifact directories
// (-artifacts): without it they are removed when the test ends, and a
// report path printed in a failure would already be gone.
func artifactsKept() bool {
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true"
}
