package reports

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/locklab/locklab/models"
)

// writeJUnit writes one testsuite per scenario and one testcase per
// scenario × lock × resource × seed: a result that is not the documented
// one is a failure (an ERROR an error), a skipped run is skipped, and a
// documented FAIL that was caught passes.
func writeJUnit(w io.Writer, r Report) error {
	suites := junit.Testsuites{Name: xmlSafe(r.Title), Time: seconds(r.Seconds)}
	var current *junit.Testsuite
	var total float64
	timed := map[string]bool{} // the resources of one run share its time
	flush := func() {
		if current != nil {
			current.Time = seconds(total)
			suites.AddSuite(*current)
		}
	}
	for _, run := range r.Runs {
		if current == nil || current.Name != xmlSafe(run.Scenario) {
			flush()
			current = &junit.Testsuite{Name: xmlSafe(run.Scenario), ID: len(suites.Suites)}
			total = 0
		}
		if key := fmt.Sprintf("%s\x00%s\x00%d", run.Scenario, run.Lock, run.Seed); !timed[key] {
			timed[key] = true
			total += run.Seconds
		}
		tc := junit.Testcase{
			Classname: xmlSafe("locklab." + run.Scenario),
			Name:      xmlSafe(fmt.Sprintf("%s × %s seed %d", run.Lock, run.Resource, run.Seed)),
			Time:      seconds(run.Seconds),
		}
		why := xmlSafe(firstFailure(run))
		detail := xmlSafe(details(run))
		switch {
		case run.Skipped != "":
			tc.Skipped = &junit.Result{Message: xmlSafe(run.Skipped)}
		case run.Verdict == models.Error:
			tc.Error = &junit.Result{Message: why, Type: "ERROR", Data: detail}
		case !run.Matches:
			tc.Failure = &junit.Result{Message: fmt.Sprintf("%s, documented %s: %s", run.Verdict, xmlSafe(run.Expected), why),
				Type: string(run.Verdict), Data: detail}
		}
		current.AddTestcase(tc)
	}
	flush()
	return suites.WriteXML(w)
}

// details is the body of a failure: every check, the error, the replay.
func details(r Run) string {
	var b strings.Builder
	for _, v := range r.Checks {
		fmt.Fprintf(&b, "%s %s: %s\n", v.Check, v.Result, v.Explanation)
		for _, e := range v.Evidence {
			fmt.Fprintf(&b, "    %s\n", e)
		}
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "error: %s\n", r.Error)
	}
	if r.Replay != "" {
		fmt.Fprintf(&b, "replay: %s\n", r.Replay)
	}
	return b.String()
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

// xmlSafe drops what XML 1.0 cannot hold at all (control characters other
// than tab and newline, invalid UTF-8); the encoder escapes the rest.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == utf8.RuneError, r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0xFFFE, r == 0xFFFF:
			return -1
		}
		return r
	}, s)
}
