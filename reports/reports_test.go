package reports_test

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/reports"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pausedHolder is a report of the paused-holder scenario on etcd-mutex, from
// histories the lab recorded, checked as a run checks them.
func pausedHolder(t *testing.T, dir string) reports.Report {
	t.Helper()
	rep := reports.Report{Title: "locklab run", Command: "locklab run --scenario paused-holder --lock etcd-mutex",
		Complete: true, Seconds: 1.5}
	for _, res := range []string{"unfenced", "fenced"} {
		run := recorded(t, dir, "paused-holder-"+res, "paused-holder")
		run.Expected = string(models.Pass)
		if res == "unfenced" {
			run.Expected = string(models.Fail)
		}
		run.Matches = string(run.Verdict) == run.Expected
		run.Lesson, run.Replay, run.Seconds = "c1 freezes before its write…", "go run ./cmd/locklab replay reports/x/paused-holder/etcd-mutex/1", 1.4
		rep.Runs = append(rep.Runs, run)
	}
	return rep
}

// The paused-holder page shows what a reader must see: the unfenced
// timeline has two holders at once and the lost update, the fenced one the
// rejected stale write; the lease's end is drawn where the server ended it.
func TestPausedHolderTimeline(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, reports.Write(dir, pausedHolder(t, dir)))
	page, err := os.ReadFile(filepath.Join(dir, reports.IndexFile))
	require.NoError(t, err)
	html := string(page)
	assert.Equal(t, 2, strings.Count(html, `<svg class="timeline"`))
	assert.Contains(t, html, `class="overlap"`, "two clients believed they held the lock")
	assert.Contains(t, html, `class="gone"`, "c1 held on after the server ended its lease")
	assert.Contains(t, html, `class="wbad"`, "the fenced store rejected c1's stale write")
	assert.Contains(t, html, "pause-client c1", "the fault band")
	assert.Contains(t, html, "c1 and c2 both read 0 and both wrote 1", "the counter check's evidence")
	assert.Contains(t, html, "the server has ended c1&#39;s lease", "the narrative")
	assert.Contains(t, html, "go run ./cmd/locklab replay")
	assert.NotContains(t, html, `id="incomplete"`)
	assert.FileExists(t, filepath.Join(dir, "paused-holder-unfenced.counter.porcupine.html"))
	assert.Contains(t, html, `href="paused-holder-unfenced.counter.porcupine.html"`)
	for _, ref := range []string{"http://", "https://", "<link", "src="} {
		assert.NotContains(t, html, ref, "the page is self-contained")
	}
}

// junit.xml parses, and its counts are the results': not as documented is
// a failure, ERROR an error, skipped skipped, a documented FAIL a pass.
func TestJUnitCountsMatchTheResults(t *testing.T) {
	dir := t.TempDir()
	rep := reports.Report{Title: "locklab run", Complete: true, Runs: []reports.Run{
		{Scenario: "a", Lock: "l", Resource: "fenced", Expected: "PASS", Verdict: models.Pass, Matches: true},
		{Scenario: "a", Lock: "l", Resource: "unfenced", Expected: "FAIL", Verdict: models.Fail, Matches: true},
		{Scenario: "b", Lock: "l", Resource: "fenced", Expected: "PASS", Verdict: models.Fail,
			Checks: []models.Verdict{{Check: "validity", Result: models.Fail, Explanation: "Granted twice. More."}}},
		{Scenario: "b", Lock: "l", Resource: "unfenced", Expected: "FAIL", Verdict: models.Error, Error: "vacuous schedule"},
		{Scenario: "c", Lock: "l", Resource: "fenced", Expected: "PASS", Skipped: "needs member faults"},
	}}
	require.NoError(t, reports.Write(dir, rep))
	b, err := os.ReadFile(filepath.Join(dir, reports.JUnitFile))
	require.NoError(t, err)
	var got struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b, &got))
	assert.Equal(t, []int{5, 1, 1, 1}, []int{got.Tests, got.Failures, got.Errors, got.Skipped})
	require.Len(t, got.Suites, 3)
	assert.Equal(t, "FAIL, documented PASS: validity FAIL: Granted twice.", got.Suites[1].Cases[0].Failure.Message)

	md, err := os.ReadFile(filepath.Join(dir, reports.SummaryFile))
	require.NoError(t, err)
	sections := mdSections(string(md))
	bad := sections["Not as documented (2)"]
	require.Len(t, bad, 2, "every run not as documented, first: %s", md)
	assert.Contains(t, bad[0], "❌")
	assert.Contains(t, bad[0], "validity FAIL: Granted twice.")
	assert.Contains(t, bad[0], "| b | l | fenced |")
	assert.Contains(t, bad[1], "vacuous schedule")
	caught := sections["Documented findings, caught (1)"]
	require.Len(t, caught, 1, "then the documented FAILs, grouped")
	assert.Equal(t, "| ☑️ | a | unfenced |  | 1 | l |", caught[0])
	assert.Contains(t, string(md), "✅ 1 PASS as documented: a 1.")
	require.Len(t, sections["Skipped (1)"], 1, "skipped, grouped by why, last")
	assert.Contains(t, sections["Skipped (1)"][0], "⏭️")
}

// mdSections maps each "### " heading of a summary to its table's rows
// (header and separator left out).
func mdSections(md string) map[string][]string {
	out := map[string][]string{}
	head := ""
	for _, l := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(l, "### "):
			head = strings.TrimPrefix(l, "### ")
			out[head] = nil
		case strings.HasPrefix(l, "| | "), strings.HasPrefix(l, "|---"):
		case strings.HasPrefix(l, "| "):
			out[head] = append(out[head], l)
		}
	}
	return out
}

// summary.md fits a pull-request comment however big the campaign: what
// does not fit is counted, and the rest is still there.
func TestASummaryFitsAComment(t *testing.T) {
	dir := t.TempDir()
	rep := reports.Report{Title: "locklab run", Complete: true}
	long := strings.Repeat("why it failed, at length. ", 40)
	for i := range 3000 {
		run := reports.Run{Scenario: fmt.Sprintf("s%d", i%20), Lock: fmt.Sprintf("lock-%d", i%7), Resource: "fenced", Seed: uint64(i),
			Expected: "PASS", Verdict: models.Pass, Matches: true, Replay: "go run ./cmd/locklab replay reports/x/" + fmt.Sprint(i)}
		switch i % 3 {
		case 0:
			run.Verdict, run.Matches, run.Checks = models.Fail, false, []models.Verdict{{Check: "validity", Result: models.Fail, Explanation: long}}
		case 1:
			run.Expected, run.Verdict, run.Checks = "FAIL", models.Fail, []models.Verdict{{Check: "counter", Result: models.Fail, Explanation: long}}
		}
		rep.Runs = append(rep.Runs, run)
	}
	require.NoError(t, reports.Write(dir, rep))
	md, err := os.ReadFile(filepath.Join(dir, reports.SummaryFile))
	require.NoError(t, err)
	assert.LessOrEqual(t, len(md), reports.MaxSummary)
	assert.Contains(t, string(md), "3000 configuration(s)")
	assert.Regexp(t, `… and \d+ more not as documented: `+"`index.html`"+` lists every one.`, string(md))
	assert.Contains(t, string(md), "### Documented findings, caught (1000)")
	assert.Contains(t, string(md), "✅ 1000 PASS as documented")
}

// Every recorded string is escaped: names that are markup stay text in
// the page, in the summary and in junit.xml.
func TestHostileNamesAreEscaped(t *testing.T) {
	dir := t.TempDir()
	evil := `<script>alert("x")</script><img src=x onerror=alert(1)>|*` + "\x00\x1b"
	ev := []history.Event{
		{Time: 1, Type: history.Invoke, ID: 1, Client: evil, Op: history.Acquire, Lock: "l"},
		{Time: 2, Type: history.Ok, ID: 1, Client: evil, Op: history.Acquire, Lock: "l", Token: 3},
		{Time: 3, Type: history.FaultStart, ID: 1, Fault: evil},
		{Time: 4, Type: history.FaultEnd, ID: 1, Fault: evil, Error: evil},
	}
	rep := reports.Report{Title: evil, Command: evil, Runs: []reports.Run{{
		Scenario: evil, Lock: evil, Resource: evil, Expected: evil, Verdict: models.Error, Error: evil, Lesson: evil, Retried: []string{evil},
		Checks:  []models.Verdict{{Check: evil, Result: models.Fail, Explanation: evil, Evidence: []string{evil}}},
		Effects: []reports.Effect{{Name: evil, Missing: evil}}, Replay: evil, History: "h.jsonl", Events: ev,
	}}}
	require.NoError(t, reports.Write(dir, rep))
	// Markup inside a Markdown code span or an XML CDATA section is text.
	inert := regexp.MustCompile("(?s)`[^`]*`|<!\\[CDATA\\[.*?\\]\\]>")
	for _, name := range []string{reports.IndexFile, reports.SummaryFile, reports.JUnitFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		live := inert.ReplaceAllString(string(b), "")
		if name == reports.IndexFile {
			// The page's own script (its filter and zoom), once, and no other.
			assert.Equal(t, 1, strings.Count(live, "<script"), "index.html has its own script only")
			live = strings.Replace(live, "<script>\n(function () {", "", 1)
		}
		assert.NotRegexp(t, `(^|[^\\])<(script|img)`, live, "%s: markup must be escaped", name)
		assert.NotContains(t, string(b), "\x00", name)
	}
	b, err := os.ReadFile(filepath.Join(dir, reports.JUnitFile))
	require.NoError(t, err)
	var v any
	require.NoError(t, xml.Unmarshal(b, &v), "junit.xml stays well-formed")
	page, err := os.ReadFile(filepath.Join(dir, reports.IndexFile))
	require.NoError(t, err)
	assert.Contains(t, string(page), `id="incomplete"`, "an incomplete run says so")
	assert.Contains(t, string(page), `Ran again after &lt;script&gt;`, "an earlier attempt is named, as text")
	md, err := os.ReadFile(filepath.Join(dir, reports.SummaryFile))
	require.NoError(t, err)
	cols := 0 // the columns of the table being read: its header's
	for _, line := range strings.Split(string(md), "\n") {
		n := strings.Count(line, "|") - strings.Count(line, `\|`)
		switch {
		case !strings.HasPrefix(line, "|"):
			cols = 0
		case cols == 0:
			cols = n
		default:
			assert.Equal(t, cols, n, "no name breaks the table's columns: %s", line)
		}
	}
}

// A run the environment kept from being judged is counted as such on the
// page and in summary.md, not as a finding against the lock; the page says
// its last attempt ran with longer leases.
func TestANotJudgedRunIsCountedAsSuch(t *testing.T) {
	dir := t.TempDir()
	rep := pausedHolder(t, dir)
	busy := rep.Runs[1]
	busy.Verdict, busy.Matches, busy.LeaseScale = models.Error, false, 2
	busy.Checks = append(busy.Checks, models.Verdict{Check: "environment", Result: models.Error,
		Explanation: "The environment cut the run short: too little progress. The machine was too slow."})
	rep.Runs[1] = busy
	require.NoError(t, reports.Write(dir, rep))
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "1 as expected, 0 not, 0 skipped, 1 not judged (the machine was too busy).")
	assert.Contains(t, string(md), "⏸️")
	page, err := os.ReadFile(filepath.Join(dir, reports.IndexFile))
	require.NoError(t, err)
	assert.Contains(t, string(page), "1 as expected, 0 not, 0 skipped, 1 not judged (the machine was too busy).")
	assert.Contains(t, string(page), "The last attempt gave the machine room: leases 2 times as long as the lesson writes them")
}

// A run stopped by Ctrl-C is counted as interrupted, on the page and in
// summary.md, never as skipped.
func TestAnInterruptedRunIsCountedAsSuch(t *testing.T) {
	dir := t.TempDir()
	rep := pausedHolder(t, dir)
	cut := rep.Runs[1]
	cut.Verdict, cut.Matches, cut.Skipped, cut.Interrupted, cut.Checks = "", false, "interrupted", true, nil
	rep.Runs[1] = cut
	require.NoError(t, reports.Write(dir, rep))
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "1 as expected, 0 not, 0 skipped, 1 interrupted.")
	assert.NotContains(t, string(md), "### Skipped")
	page, err := os.ReadFile(filepath.Join(dir, reports.IndexFile))
	require.NoError(t, err)
	assert.Contains(t, string(page), "1 as expected, 0 not, 0 skipped, 1 interrupted.")
}
