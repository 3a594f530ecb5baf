package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// printTable prints the verdict matrix: a row per scenario × lock, a column
// per resource; "!" marks a verdict that is not the expected one, "*" a
// finding that two clients believed they held the lock at once. With
// several seeds, a cell whose seeds differ shows the worst of them and on
// how many seeds it came ("FAIL! 1/3").
func printTable(w io.Writer, sum scenarios.Summary) {
	type row struct{ scenario, lock string }
	var rows []row
	var resources []string
	seeds := map[row]map[string][]scenarios.Result{}
	for _, r := range sum.Results {
		k := row{r.Scenario, r.Lock}
		if seeds[k] == nil {
			seeds[k] = map[string][]scenarios.Result{}
			rows = append(rows, k)
		}
		if !slices.Contains(resources, r.Resource) {
			resources = append(resources, r.Resource)
		}
		seeds[k][r.Resource] = append(seeds[k][r.Resource], r)
	}
	if len(rows) == 0 {
		return
	}
	cells := map[row]map[string]string{}
	for k, byResource := range seeds {
		cells[k] = map[string]string{}
		for res, rs := range byResource {
			cells[k][res] = cellOf(rs)
		}
	}
	// Columns as wide as their longest name or cell.
	ws, wl := len("scenario"), len("lock")
	for _, k := range rows {
		ws, wl = max(ws, utf8.RuneCountInString(k.scenario)), max(wl, utf8.RuneCountInString(k.lock))
	}
	wr := map[string]int{}
	for _, r := range resources {
		wr[r] = utf8.RuneCountInString(r)
		for _, k := range rows {
			wr[r] = max(wr[r], utf8.RuneCountInString(cells[k][r]))
		}
	}
	fmt.Fprintf(w, "\n%-*s  %-*s", ws, "scenario", wl, "lock")
	for _, r := range resources {
		fmt.Fprintf(w, "  %-*s", wr[r], r)
	}
	fmt.Fprintln(w)
	for _, k := range rows {
		line := fmt.Sprintf("%-*s  %-*s", ws, k.scenario, wl, k.lock)
		for _, r := range resources {
			line += fmt.Sprintf("  %-*s", wr[r], cells[k][r])
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	fmt.Fprintln(w, "! not the expected verdict   * two clients believed they held the lock at once (a finding, not a failure)")
}

// cellOf is the matrix cell of one configuration's seeds: the worst
// verdict (one not as expected first, then ERROR, FAIL, UNKNOWN, PASS,
// skipped), with the share of seeds that gave it where they differ.
func cellOf(rs []scenarios.Result) string {
	text := func(r scenarios.Result) string {
		cell := string(r.Verdict)
		switch {
		case r.Skipped != "":
			cell = "skipped"
		case r.Progress == "FAIL" && !r.Matches:
			cell += "!(progress)"
		case !r.Matches:
			cell += "!"
		}
		return cell
	}
	rank := func(r scenarios.Result) int {
		n := slices.Index([]models.Result{models.Pass, models.Unknown, models.Fail, models.Error}, r.Verdict) + 1
		if r.Skipped != "" {
			n = 0
		}
		if !r.Matches && r.Skipped == "" {
			n += 10
		}
		return n
	}
	worst, belief := rs[0], false
	for _, r := range rs {
		if rank(r) > rank(worst) {
			worst = r
		}
		belief = belief || r.Belief == "FAIL"
	}
	cell, same := text(worst), 0
	for _, r := range rs {
		if text(r) == cell {
			same++
		}
	}
	if belief {
		cell += "*"
	}
	if same < len(rs) {
		cell += fmt.Sprintf(" %d/%d", same, len(rs))
	}
	return cell
}

// printEffectCounts prints, per scenario, in how many runs of each lock each of
// its effects happened: a column per lock.
func printEffectCounts(w io.Writer, sum scenarios.Summary) {
	counts := sum.EffectCounts()
	if len(counts) == 0 {
		return
	}
	fmt.Fprintln(w, "\neffects: runs in which what the scenario claims happened (fewer than all: vacuous runs, ERROR; - skipped)")
	var scenarioOrder []string
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
	}
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
}

// printSummary prints the matrix, the effects and the counts of a run.
func printSummary(w io.Writer, sum scenarios.Summary) {
	printTable(w, sum)
	printEffectCounts(w, sum)
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
	fmt.Fprintf(w, "\n%d configuration(s) in %.1fs: %d as expected, %d not, %d skipped", len(sum.Results), sum.Seconds,
		expected, unexpected, skipped)
	if interrupted > 0 {
		fmt.Fprintf(w, ", %d interrupted", interrupted)
	}
	if unjudged > 0 {
		fmt.Fprintf(w, ", %d not judged (the machine was too busy on every attempt: run them again on a quieter "+
			"machine, or with --ttl 2; exit status 3)", unjudged)
	}
	fmt.Fprintln(w)
	if sum.NothingRan() {
		fmt.Fprintln(w, "  every configuration was skipped: nothing was tested (exit status 3)")
	}
	if sum.Campaign != nil {
		for _, l := range sum.Campaign.LeftOut {
			fmt.Fprintf(w, "  left out (another store's lesson): %s\n", l)
		}
	}
	remedied := map[string]bool{} // each check's remedy is said once a run
	for _, r := range sum.Results {
		if r.Skipped == "" && !r.Matches {
			mark := "UNEXPECTED"
			if r.NotJudged() {
				mark = "NOT JUDGED"
			}
			fmt.Fprintf(w, "  %s %s × %s × %s: %s, expected %s\n", mark, r.Scenario, r.Lock, r.Resource,
				models.Shown(r.Verdict, r.Checks), r.Expected)
			if r.Error != "" {
				fmt.Fprintf(w, "    error: %s\n", strings.ReplaceAll(r.Error, "\n", "\n      "))
			}
			for _, c := range r.Checks {
				if c.Result == "FAIL" || c.Result == "UNKNOWN" {
					fmt.Fprintf(w, "    %s %s: %s\n", c.Check, c.Result, c.Explanation)
					for _, ev := range c.Evidence {
						fmt.Fprintf(w, "      %s\n", ev)
					}
					if rem := models.Remedy(c.Check); rem != "" && r.Expected == scenarios.ExpectPass && !remedied[c.Check] {
						remedied[c.Check] = true
						fmt.Fprintf(w, "    what to change (%s): %s\n", c.Check, rem)
					}
				}
			}
			if r.History != "" {
				fmt.Fprintf(w, "    history: %s\n", r.History)
			}
		}
		if r.LostFraction != nil && *r.LostFraction > 0 {
			fmt.Fprintf(w, "  %s × %s × %s: %.1f%% of acknowledged increments lost\n", r.Scenario, r.Lock, r.Resource, 100**r.LostFraction)
		}
	}
}
