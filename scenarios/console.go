package scenarios

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/locklab/locklab/models"
)

// columns are the widths of a progress line's name columns: the longest
// scenario and lock name of the run.
type columns struct{ scenario, lock int }

// columnsOf sizes the columns to the jobs' names.
func columnsOf(jobs []job) columns {
	c := columns{scenario: len("scenario"), lock: len("lock")}
	for _, j := range jobs {
		c.scenario = max(c.scenario, utf8.RuneCountInString(j.s.Name))
		c.lock = max(c.lock, utf8.RuneCountInString(j.lock))
	}
	return c
}

// progress prints one configuration's results as a line, with its notes
// under it: a skip's reason (the first time the run meets it: said keeps
// those given), an error, the attempts made again.
func progress(w io.Writer, cols columns, rs []Result, said map[string]bool) {
	if len(rs) == 0 {
		return
	}
	line := fmt.Sprintf("%-*s  %-*s", cols.scenario, rs[0].Scenario, cols.lock, rs[0].Lock)
	var skips []string
	for _, r := range rs {
		mark := "ok"
		switch {
		case r.Interrupted:
			mark = "interrupted"
		case r.Skipped != "":
			mark = "skipped"
			if !slices.Contains(skips, r.Skipped) && !said[r.Skipped] {
				skips = append(skips, r.Skipped)
				said[r.Skipped] = true
			}
		case r.NotJudged():
			mark = "not judged: the machine"
		case !r.Matches:
			mark = "UNEXPECTED"
		}
		if r.Verdict == "" {
			line += fmt.Sprintf("  %s %s", r.Resource, mark)
			continue
		}
		line += fmt.Sprintf("  %s %s (%s)", r.Resource, models.Shown(r.Verdict, r.Checks), mark)
	}
	took := slices.MaxFunc(rs, func(a, b Result) int { return cmp.Compare(a.Seconds, b.Seconds) }).Seconds
	fmt.Fprintf(w, "%s  %.1fs\n", line, took)
	for _, s := range skips {
		fmt.Fprintf(w, "    skipped: %s\n", indent(s, "      "))
	}
	for _, r := range rs[:1] {
		if r.Error != "" && r.Skipped == "" {
			fmt.Fprintf(w, "    note: %s\n", indent(r.Error, "      "))
		}
		for _, a := range r.Retried {
			fmt.Fprintf(w, "    ran again after %s\n", indent(a, "      "))
		}
		if r.LeaseScale > 0 {
			fmt.Fprintf(w, "    the last attempt gave the machine room: leases %d times as long as the lesson writes them "+
				"(--ttl %d)\n", r.LeaseScale, r.LeaseScale)
		}
	}
}

// indent puts prefix before every line of s but its first.
func indent(s, prefix string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}
