package reports

import (
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/locklab/locklab/models"
)

// writeMarkdown writes the short summary for a pull-request comment: the
// counts, then a table of every run, failures first, each with its one-line
// explanation and the command that replays it.
func writeMarkdown(w io.Writer, r Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", mdEscape(r.Title))
	if !r.Complete {
		b.WriteString("**Interrupted: these results are incomplete.**\n\n")
	}
	asExpected, not, unjudged, skipped := counts(r.Runs)
	fmt.Fprintf(&b, "%d configuration(s) in %.1f s: %d as expected, %d not, %d skipped", len(r.Runs), r.Seconds,
		asExpected, not, skipped)
	if unjudged > 0 {
		fmt.Fprintf(&b, ", %d not judged (the machine was too busy)", unjudged)
	}
	b.WriteString(".\n\n")
	if r.Command != "" {
		fmt.Fprintf(&b, "`%s`\n\n", codeEscape(r.Command))
	}
	b.WriteString("| | scenario | lock | resource | seed | verdict | expected | why | replay |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, i := range order(r.Runs) {
		run := r.Runs[i]
		mark := "✅"
		switch {
		case run.Skipped != "":
			mark = "⏭️"
		case models.NotJudged(run.Verdict, run.Matches, run.Checks):
			mark = "⏸️" // not judged: the machine was too busy
		case !run.Matches:
			mark = "❌"
		case run.Verdict == models.Fail:
			mark = "☑️" // a documented FAIL: the lab caught what it must
		}
		replay := ""
		if run.Replay != "" {
			replay = "`" + codeEscape(run.Replay) + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %s | %s | %s | %s |\n", mark,
			mdEscape(run.Scenario), mdEscape(run.Lock), mdEscape(run.Resource), run.Seed,
			status(run), mdEscape(run.Expected), mdEscape(firstFailure(run)), replay)
	}
	b.WriteString("\n❌ not the documented verdict · ☑️ a documented FAIL, caught · ✅ PASS as documented · ⏭️ skipped\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// counts tallies runs as expected, not, not judged (models.NotJudged) and
// skipped.
func counts(runs []Run) (asExpected, not, unjudged, skipped int) {
	for _, r := range runs {
		switch {
		case r.Skipped != "":
			skipped++
		case r.Matches:
			asExpected++
		case models.NotJudged(r.Verdict, r.Matches, r.Checks):
			unjudged++
		default:
			not++
		}
	}
	return
}

// mdEscape makes s safe in a Markdown table cell: no table breaks, no
// inline HTML, no formatting.
func mdEscape(s string) string {
	s = printable(s)
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune("\\`*_[]<>|&~", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// codeEscape makes s safe inside an inline code span in a table.
func codeEscape(s string) string {
	return strings.NewReplacer("`", "'", "|", "\\|").Replace(printable(s))
}

// printable is s on one line, without control characters.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
}
