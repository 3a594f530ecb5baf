package reports

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/locklab/locklab/models"
)

// MaxSummary bounds summary.md, in bytes: a pull-request comment holds
// 65,536 characters, and a campaign of any size must fit one. What does
// not fit is counted, and left to index.html and results.json.
const MaxSummary = 60_000

// writeMarkdown writes the short summary for a pull-request comment: the
// counts; every run not as documented, with its one-line explanation and
// the command that replays it; the documented findings, grouped; the
// passes and the skips, counted. It never exceeds MaxSummary: rows that do
// not fit are counted instead.
func writeMarkdown(w io.Writer, r Report) error {
	var head strings.Builder
	fmt.Fprintf(&head, "## %s\n\n", mdEscape(r.Title))
	if !r.Complete {
		head.WriteString("**Interrupted: these results are incomplete.**\n\n")
	}
	asExpected, not, unjudged, skipped, interrupted := counts(r.Runs)
	fmt.Fprintf(&head, "%d configuration(s) in %.1f s: %d as expected, %d not, %d skipped", len(r.Runs), r.Seconds,
		asExpected, not, skipped)
	if interrupted > 0 {
		fmt.Fprintf(&head, ", %d interrupted", interrupted)
	}
	if unjudged > 0 {
		fmt.Fprintf(&head, ", %d not judged (the machine was too busy)", unjudged)
	}
	head.WriteString(".\n\n")
	if r.Command != "" {
		fmt.Fprintf(&head, "`%s`\n\n", codeEscape(r.Command))
	}
	tail := findings(r.Runs) + passes(r.Runs) + skips(r.Runs) +
		"\n❌ not the documented verdict · ⏸️ not judged (the machine was too busy) · ☑️ a documented FAIL, caught · " +
		"✅ PASS as documented · ⏭️ skipped. Every run, with its evidence and its replay command: `index.html` beside " +
		"this file (`results.json` holds them all).\n"
	body := notAsDocumented(r.Runs, MaxSummary-head.Len()-len(tail))
	out := head.String() + body + tail
	if len(out) > MaxSummary { // only the grouped sections of a pathological run get here
		out = clip(out, MaxSummary-len(cut)-len("…")) + cut
	}
	_, err := io.WriteString(w, out)
	return err
}

// cut ends a summary cut short.
const cut = "\n\n… (cut to fit a comment: `index.html` has everything)\n"

// notAsDocumented is the table of the runs not as documented (not judged
// ones among them, marked), as many rows as fit in budget bytes; the rest
// are counted.
func notAsDocumented(runs []Run, budget int) string {
	var rows []Run
	for _, run := range runs {
		if run.Skipped == "" && !run.Matches {
			rows = append(rows, run)
		}
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Not as documented (%d)\n\n", len(rows))
	b.WriteString("| | scenario | lock | resource | seed | verdict | expected | why | replay |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for i, run := range rows {
		mark := "❌"
		if models.NotJudged(run.Verdict, run.Matches, run.Checks) {
			mark = "⏸️" // not judged: the machine was too busy
		}
		replay := ""
		if run.Replay != "" {
			replay = "`" + codeEscape(run.Replay) + "`"
		}
		line := fmt.Sprintf("| %s | %s | %s | %s | %d | %s | %s | %s | %s |\n", mark,
			mdEscape(run.Scenario), mdEscape(run.Lock), mdEscape(run.Resource), run.Seed,
			status(run), mdEscape(run.Expected), mdEscape(clip(firstFailure(run), 300)), replay)
		more := fmt.Sprintf("\n… and %d more not as documented: `index.html` lists every one.\n", len(rows)-i)
		if b.Len()+len(line)+len(more)+2 > budget {
			b.WriteString(more)
			return b.String() + "\n"
		}
		b.WriteString(line)
	}
	return b.String() + "\n"
}

// maxGroups bounds the rows of the grouped sections.
const maxGroups = 150

// findings groups the documented FAILs, caught as documented, by scenario,
// resource and the check that caught them, naming the locks and seeds.
func findings(runs []Run) string {
	type key struct{ scenario, resource, check string }
	groups := map[key][]Run{}
	var keys []key
	for _, run := range runs {
		if run.Skipped != "" || !run.Matches || run.Verdict != models.Fail {
			continue
		}
		check, _, _ := strings.Cut(firstFailure(run), " ")
		k := key{run.Scenario, run.Resource, check}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], run)
	}
	if len(keys) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Documented findings, caught (%d)\n\n", countOf(groups))
	b.WriteString("| | scenario | resource | caught by | runs | locks |\n|---|---|---|---|---|---|\n")
	for i, k := range keys {
		if i == maxGroups {
			fmt.Fprintf(&b, "\n… and %d more groups: `index.html` lists every run.\n", len(keys)-i)
			break
		}
		g := groups[k]
		fmt.Fprintf(&b, "| ☑️ | %s | %s | %s | %d | %s |\n", mdEscape(k.scenario), mdEscape(k.resource), mdEscape(k.check),
			len(g), mdEscape(clip(names(g, func(r Run) string { return r.Lock }), 300)))
	}
	return b.String() + "\n"
}

// passes counts the runs that passed as documented, by scenario.
func passes(runs []Run) string {
	by := map[string]int{}
	var scenarios []string
	total := 0
	for _, run := range runs {
		if run.Skipped != "" || !run.Matches || run.Verdict == models.Fail {
			continue
		}
		if by[run.Scenario] == 0 {
			scenarios = append(scenarios, run.Scenario)
		}
		by[run.Scenario]++
		total++
	}
	if total == 0 {
		return ""
	}
	parts := make([]string, len(scenarios))
	for i, s := range scenarios {
		parts[i] = fmt.Sprintf("%s %d", mdEscape(s), by[s])
	}
	return fmt.Sprintf("### As documented\n\n✅ %d PASS as documented: %s.\n\n", total, clip(strings.Join(parts, ", "), 4000))
}

// skips groups the skipped runs by why (what each says before its
// particulars in parentheses: leases, times).
func skips(runs []Run) string {
	groups := map[string][]Run{}
	var whys []string
	for _, run := range runs {
		if run.Skipped == "" || run.Interrupted {
			continue
		}
		why, _, _ := strings.Cut(run.Skipped, " (")
		if _, ok := groups[why]; !ok {
			whys = append(whys, why)
		}
		groups[why] = append(groups[why], run)
	}
	if len(whys) == 0 {
		return ""
	}
	slices.SortStableFunc(whys, func(a, b string) int { return cmp.Compare(len(groups[b]), len(groups[a])) })
	var b strings.Builder
	fmt.Fprintf(&b, "### Skipped (%d)\n\n| | runs | why | scenarios |\n|---|---|---|---|\n", countOf(groups))
	for i, why := range whys {
		if i == maxGroups {
			fmt.Fprintf(&b, "\n… and %d more reasons: `index.html` lists every run.\n", len(whys)-i)
			break
		}
		g := groups[why]
		fmt.Fprintf(&b, "| ⏭️ | %d | %s | %s |\n", len(g), mdEscape(clip(why, 300)),
			mdEscape(clip(names(g, func(r Run) string { return r.Scenario }), 200)))
	}
	return b.String() + "\n"
}

// countOf is how many runs the groups hold.
func countOf[K comparable](groups map[K][]Run) int {
	n := 0
	for _, g := range groups {
		n += len(g)
	}
	return n
}

// names lists the distinct names of runs, in order of first appearance.
func names(runs []Run, name func(Run) string) string {
	var out []string
	for _, r := range runs {
		if n := name(r); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

// clip shortens s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// counts tallies runs as expected, not, not judged (models.NotJudged),
// skipped, and interrupted (counted apart from the skipped).
func counts(runs []Run) (asExpected, not, unjudged, skipped, interrupted int) {
	for _, r := range runs {
		switch {
		case r.Interrupted:
			interrupted++
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
