package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenarios"
)

// printTable prints the verdict matrix (reports.Group: the index shows
// the same): a row per scenario, a column per resource, and the locks
// whose verdicts the row shows last. "!" marks a verdict that is not the
// expected one, "*" a finding that two clients believed they held the lock
// at once; with several seeds, a cell whose seeds differ shows the worst
// of them and on how many seeds it came ("FAIL! 1/3").
func printTable(w io.Writer, sum scenarios.Summary) {
	runs := make([]reports.Run, len(sum.Results))
	for i, r := range sum.Results {
		runs[i] = reports.Run{Scenario: r.Scenario, Lock: r.Lock, Resource: r.Resource, Verdict: r.Verdict, Matches: r.Matches,
			Skipped: r.Skipped, Interrupted: r.Interrupted, Progress: r.Progress, Checks: r.Checks}
		if r.Belief == models.Fail && !reports.Believed(runs[i]) {
			runs[i].Checks = append(slices.Clone(r.Checks), models.Verdict{Check: "mutex", Result: models.Fail})
		}
	}
	m := reports.Group(runs)
	if len(m.Rows) == 0 {
		return
	}
	lines := [][]string{append(append([]string{"scenario"}, m.Resources...), "locks")}
	for _, row := range m.Rows {
		line := []string{row.Scenario}
		for _, c := range row.Cells {
			line = append(line, c.Text)
		}
		lines = append(lines, append(line, row.Who()))
	}
	width := make([]int, len(lines[0]))
	for _, l := range lines {
		for i, c := range l {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, l := range lines {
		line := ""
		for i, c := range l {
			line += fmt.Sprintf("%-*s  ", width[i], c)
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	fmt.Fprintln(w, "! not the expected verdict   * two clients believed they held the lock at once (a finding, not a failure)")
}

// printEffectCounts prints, for each scenario where what it claims did not
// happen in every run, in how many runs of each lock each of its effects
// happened: a column per lock. It reports whether every effect happened
// in every run (the summary then says so in one line, effectsAllHappened).
func printEffectCounts(w io.Writer, sum scenarios.Summary) (all bool) {
	counts := sum.EffectCounts()
	if len(counts) == 0 {
		return false
	}
	var scenarioOrder []string
	short := map[string]bool{} // scenarios with an effect that did not always happen
	locks := map[string][]string{}
	effects := map[string][]string{}
	cell := map[[3]string]scenarios.EffectCount{}
	for _, c := range counts {
		if !slices.Contains(scenarioOrder, c.Scenario) {
			scenarioOrder = append(scenarioOrder, c.Scenario)
		}
		if !slices.Contains(locks[c.Scenario], c.Lock) {
			locks[c.Scenario] = append(locks[c.Scenario], c.Lock)
		}
		if !slices.Contains(effects[c.Scenario], c.Effect) {
			effects[c.Scenario] = append(effects[c.Scenario], c.Effect)
		}
		cell[[3]string{c.Scenario, c.Lock, c.Effect}] = c
		short[c.Scenario] = short[c.Scenario] || c.Happened < c.Runs
	}
	scenarioOrder = slices.DeleteFunc(scenarioOrder, func(s string) bool { return !short[s] })
	if len(scenarioOrder) == 0 {
		return true
	}
	fmt.Fprintln(w, "\neffects not in every run (fewer than all: vacuous runs, ERROR; - skipped; the others happened in all)")
	for _, s := range scenarioOrder {
		fmt.Fprintf(w, "  %s (%s)\n", s, strings.Join(locks[s], ", "))
		for _, ef := range effects[s] {
			line := "   "
			for _, l := range locks[s] {
				c := cell[[3]string{s, l, ef}]
				mark, text := " ", fmt.Sprintf("%d/%d", c.Happened, c.Runs)
				switch {
				case c.Runs == 0:
					text = "-" // every run of it was skipped
				case c.Happened < c.Runs:
					mark = "!"
				}
				line += fmt.Sprintf(" %5s%s", text, mark)
			}
			fmt.Fprintf(w, "%s  %s\n", line, ef)
		}
	}
	return false
}

// effectsAllHappened is the line that says every effect the run's lessons
// claim happened in every run.
const effectsAllHappened = "  effects: every effect the lessons claim happened, in every run (the report shows each run's)"

// printSummary prints the matrix, the effects and the counts of a run,
// then what a reader must see: every result not as expected with its
// checks, the skips by reason, the configurations run again, and the
// increments the unfenced resources lost.
func printSummary(w io.Writer, sum scenarios.Summary) {
	printTable(w, sum)
	effectsAll := printEffectCounts(w, sum)
	expected, unexpected, unjudged, skipped, interrupted := 0, 0, 0, 0, 0
	for _, r := range sum.Results {
		switch {
		case r.Interrupted:
			interrupted++
		case r.Skipped != "":
			skipped++
		case r.Matches:
			expected++
		case r.NotJudged():
			unjudged++
		default:
			unexpected++
		}
	}
	fmt.Fprintf(w, "%d configuration(s) in %.1fs: %d as expected, %d not, %d skipped", len(sum.Results), sum.Seconds,
		expected, unexpected, skipped)
	if interrupted > 0 {
		fmt.Fprintf(w, ", %d interrupted", interrupted)
	}
	if unjudged > 0 {
		fmt.Fprintf(w, ", %d not judged (the machine was too busy on every attempt: run them again on a quieter "+
			"machine, or with --ttl 2; exit status 3)", unjudged)
	}
	fmt.Fprintln(w)
	if effectsAll {
		fmt.Fprintln(w, effectsAllHappened)
	}
	if sum.NothingRan() {
		fmt.Fprintln(w, "  every configuration was skipped: nothing was tested (exit status 3)")
	}
	if sum.Campaign != nil {
		printLeftOut(w, *sum.Campaign)
	}
	printSkips(w, sum.Results)
	printRetried(w, sum.Results)
	printUnexpected(w, sum.Results)
	printLost(w, sum.Results)
}

// printUnexpected prints every result not as expected, with the checks
// that failed or could not decide, their evidence, and what to change.
func printUnexpected(w io.Writer, results []scenarios.Result) {
	remedied := map[string]bool{} // each check's remedy is said once a run
	for _, r := range results {
		if r.Skipped != "" || r.Matches {
			continue
		}
		fmt.Fprintf(w, "  %s\n", verdictLine(r))
		if r.Error != "" {
			fmt.Fprintf(w, "    error: %s\n", strings.ReplaceAll(r.Error, "\n", "\n      "))
		}
		for _, c := range r.Checks {
			if c.Result != "FAIL" && c.Result != "UNKNOWN" {
				continue
			}
			fmt.Fprintf(w, "    %s %s: %s\n", c.Check, c.Result, c.Explanation)
			for _, ev := range c.Evidence {
				fmt.Fprintf(w, "      %s\n", ev)
			}
			if rem := models.Remedy(c.Check); rem != "" && r.Expected == scenarios.ExpectPass && !remedied[c.Check] {
				remedied[c.Check] = true
				fmt.Fprintf(w, "    what to change (%s): %s\n", c.Check, rem)
			}
		}
		if r.History != "" {
			fmt.Fprintf(w, "    history: %s\n", r.History)
		}
	}
}

// printSkips prints the skipped configurations by reason, one line each:
// a scenario × lock is told once, with its first run's reason (a later
// seed's may name other leases), and those with the same reason share a
// line. Interrupted ones are counted as such, not here.
func printSkips(w io.Writer, results []scenarios.Result) {
	var pairs, whys []string
	why, n := map[string]string{}, map[string]int{}
	for _, r := range results {
		if r.Skipped == "" || r.Interrupted {
			continue
		}
		pair := r.Scenario + " × " + r.Lock
		if n[pair] == 0 {
			pairs = append(pairs, pair)
			why[pair], _, _ = strings.Cut(r.Skipped, "\n")
		}
		n[pair]++
	}
	count, which := map[string]int{}, map[string][]string{}
	for _, p := range pairs {
		if count[why[p]] == 0 {
			whys = append(whys, why[p])
		}
		count[why[p]] += n[p]
		which[why[p]] = append(which[why[p]], p)
	}
	for _, y := range whys {
		fmt.Fprintf(w, "  skipped (%d): %s: %s\n", count[y], listed(which[y], 3), y)
	}
}

// printRetried says how many configurations were run again because the
// machine, not the lock, decided an attempt (it let a lease lapse, or the
// store did not start), and where each attempt is told.
func printRetried(w io.Writer, results []scenarios.Result) {
	n, scaled := 0, 0
	for _, r := range results {
		if len(r.Retried) > 0 {
			n++
		}
		if r.LeaseScale > 0 {
			scaled++
		}
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "  ran again: %d result(s) after the machine, not the lock, decided an attempt (a lease lapsed, or the store did not start)", n)
	if scaled > 0 {
		fmt.Fprintf(w, ", %d of them with longer leases on the last attempt", scaled)
	}
	fmt.Fprintln(w, " (results.json says why, each one's \"retried\")")
}

// printLost prints, per scenario and resource, in how many runs the counter
// lost acknowledged increments and how many it lost.
func printLost(w io.Writer, results []scenarios.Result) {
	type key struct{ scenario, resource string }
	var keys []key
	runs, lost := map[key]int{}, map[key][]float64{}
	for _, r := range results {
		k := key{r.Scenario, r.Resource}
		if r.Skipped == "" {
			runs[k]++
		}
		if r.LostFraction != nil && *r.LostFraction > 0 {
			if lost[k] == nil {
				keys = append(keys, k)
			}
			lost[k] = append(lost[k], 100**r.LostFraction)
		}
	}
	if len(keys) == 0 {
		return
	}
	var each []string
	for _, k := range keys {
		lo, hi := slices.Min(lost[k]), slices.Max(lost[k])
		share := fmt.Sprintf("%.1f%%", hi)
		if lo != hi {
			share = fmt.Sprintf("%.1f–%.1f%%", lo, hi)
		}
		each = append(each, fmt.Sprintf("%s × %s %s in %d of %d runs", k.scenario, k.resource, share, len(lost[k]), runs[k]))
	}
	fmt.Fprintf(w, "  acknowledged increments lost: %s\n", strings.Join(each, "; "))
}

// listed joins the first n of names, and says how many more there are.
func listed(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// groupLeftOut is how many lessons left out the console says one line each;
// more are said in one line, by name (results.json keeps every reason,
// locklab list says which store runs each lesson).
const groupLeftOut = 2

// printLeftOut says what the campaign left out for its locks' stores: the
// resources another store keeps, a line each; the lessons, a line each
// when they are few, else their names in one line.
func printLeftOut(w io.Writer, c scenarios.Campaign) {
	grouped := map[string]bool{}
	var sets []string              // the lock sets lessons were left out for, in order
	names := map[string][]string{} // the lessons left out, by lock set
	if len(c.LessonsLeftOut) > groupLeftOut {
		for _, l := range c.LessonsLeftOut {
			grouped[l.Line()] = true
			set := strings.Join(l.Locks, ", ")
			if names[set] == nil {
				sets = append(sets, set)
			}
			if !slices.Contains(names[set], l.Lesson) {
				names[set] = append(names[set], l.Lesson)
			}
		}
	}
	for _, l := range c.LeftOut {
		if !grouped[l] {
			fmt.Fprintf(w, "  left out (another store's): %s\n", l)
		}
	}
	for _, set := range sets {
		who := "these locks' stores cannot run"
		if len(sets) > 1 || len(c.Locks) > 0 && set != strings.Join(c.Locks, ", ") {
			who = "the store of " + set + " cannot run"
		}
		lessons := fmt.Sprintf("%d lessons", len(names[set]))
		if len(names[set]) == 1 {
			lessons = "1 lesson"
		}
		fmt.Fprintf(w, "  left out: %s %s (locklab list says which store runs each; --scenario NAME says why): %s\n",
			lessons, who, strings.Join(names[set], ", "))
	}
}
