package reports_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/reports"
)

// chromium finds a headless-capable Chromium, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is a headless Chromium driven over the DevTools protocol, with
// what its pages wrote to the console.
type browser struct {
	t   testing.TB
	ctx context.Context
	log func() []string
}

// newBrowser starts Chromium at 1280 × 900 for the test, or skips it. The
// browser is stopped when the test ends; the test fails if a page it
// opened logged anything to the console or threw.
func newBrowser(t testing.TB) *browser {
	t.Helper()
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium on PATH (Debian's chromium package; .ci/run installs it): the page was not rendered")
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]), chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900), chromedp.Flag("disable-gpu", true),
		chromedp.Env("TMPDIR="+browserTemp(t)))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	messages := chromedp.Console(ctx)
	var logged []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			logged = append(logged, m.String())
		}
	}()
	b := &browser{t: t, ctx: ctx}
	b.log = func() []string { cancel(); <-done; return logged }
	t.Cleanup(func() { assert.Empty(t, b.log(), "the pages log nothing to the console and throw nothing") })
	return b
}

// open loads file and returns how long it took until the document was
// interactive, as the page's own navigation timing says.
func (b *browser) open(file string) time.Duration {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	require.NoError(b.t, chromedp.Do(b.ctx, chromedp.Navigate("file://"+file)))
	ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](
		`(function(){var n=performance.getEntriesByType("navigation")[0];return n.domInteractive;})()`))
	require.NoError(b.t, err)
	return time.Duration(ms * float64(time.Millisecond))
}

// do runs actions in the open page, each call within 30 s.
func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	require.NoError(b.t, chromedp.Do(ctx, actions...))
}

// eval runs a script in the open page and decodes its result.
func eval[T any](b *browser, script string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](script))
	require.NoError(b.t, err, script)
	return v
}

// overlappingLabels lists the pairs of labels of one timeline (axis,
// faults, waits, holds, callouts, lanes) whose rendered boxes overlap, as
// the browser laid them out.
const overlappingLabels = `(function(){
  var out = [];
  document.querySelectorAll("svg.timeline").forEach(function (svg) {
    var boxes = Array.from(svg.querySelectorAll("text")).map(function (t) {
      return {text: t.textContent, r: t.getBoundingClientRect()};
    });
    for (var i = 0; i < boxes.length; i++) for (var j = i + 1; j < boxes.length; j++) {
      var a = boxes[i].r, b = boxes[j].r;
      if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
        out.push(boxes[i].text + " / " + boxes[j].text);
    }
  });
  return out;
})()`

// The paused-holder page says the two things its timelines exist to show:
// fenced, the rejected stale write with the tokens that decided it;
// unfenced, the two writes of the same value marked as a lost update. Its
// axis labels never overlap.
func TestPausedHolderPageNamesWhatHappened(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	require.NoError(t, reports.Write(dir, pausedHolder(t, dir)))
	b.open(filepath.Join(dir, reports.IndexFile))
	callouts := func(resource string) []string {
		return eval[[]string](b, fmt.Sprintf(`Array.from(document.querySelectorAll(
			'section[data-resource=%q] svg .callout text')).map(function (t) { return t.textContent; })`, resource))
	}
	assert.Equal(t, []string{"rejected: token t1 < t2"}, callouts("fenced"))
	assert.ElementsMatch(t, []string{"lost update: c2 also wrote 1", "lost update: c1 also wrote 1"}, callouts("unfenced"))
	assert.Equal(t, 2, eval[int](b, `document.querySelectorAll('section[data-resource="unfenced"] svg .lostring').length`),
		"both writes of the lost update are marked")
	assert.Empty(t, eval[[]string](b, overlappingLabels))
	assert.Equal(t, 2, eval[int](b, `document.querySelectorAll("details[open] svg.timeline").length`), "both runs open")
}

// No two axis labels overlap on the timelines of recorded runs, among them
// a leader failover with sixty short holds; its lanes count their holds.
func TestAxisLabelsNeverOverlap(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	rep := reports.Report{Title: "locklab run", Complete: true}
	for _, name := range []string{"paused-holder-unfenced", "paused-holder-fenced", "leader-failover-unfenced",
		"random-unfenced", "isolated-asks-unfenced"} {
		rep.Runs = append(rep.Runs, recorded(t, dir, name, name))
	}
	require.NoError(t, reports.Write(dir, rep))
	b.open(filepath.Join(dir, reports.IndexFile))
	assert.Equal(t, 5, eval[int](b, `document.querySelectorAll("svg.timeline").length`))
	assert.Empty(t, eval[[]string](b, overlappingLabels))
	assert.Contains(t, eval[[]string](b, `Array.from(document.querySelectorAll("svg .lanesum")).map(function (t) { return t.textContent; })`),
		"30 holds")
	// The zoom widens a crowded timeline.
	width := `document.querySelector('section[data-scenario="leader-failover-unfenced"] svg.timeline').clientWidth`
	before := eval[float64](b, width)
	b.do(chromedp.Click(`section[data-scenario="leader-failover-unfenced"] button[data-zoom="4"]`))
	assert.InDelta(t, 4*before, eval[float64](b, width), 2)
}

// No two labels overlap on any page of a report: by default one of every
// recorded history in testdata (a run of each catalog scenario among them),
// or, with LOCKLAB_REPORT=DIR, every page of the report a run wrote there
// (locklab run --out DIR): the index and each run's page.
func TestNoLabelsOverlapOnAnyPage(t *testing.T) {
	b := newBrowser(t)
	dir := os.Getenv("LOCKLAB_REPORT")
	if dir == "" {
		dir = t.TempDir()
		files, err := filepath.Glob(filepath.Join("testdata", "*.history.jsonl"))
		require.NoError(t, err)
		rep := reports.Report{Title: "locklab run", Complete: true}
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".history.jsonl")
			rep.Runs = append(rep.Runs, recorded(t, dir, name, name))
		}
		require.NoError(t, reports.Write(dir, rep))
	}
	var pages []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".html") && filepath.Base(path) != reports.BenchFile {
			pages = append(pages, path)
		}
		return err
	}))
	require.NotEmpty(t, pages)
	drawn := 0
	for _, page := range pages {
		b.open(page)
		drawn += eval[int](b, `document.querySelectorAll("svg.timeline").length`)
		assert.Empty(t, eval[[]string](b, overlappingLabels), page)
	}
	t.Logf("%d pages, %d timelines, no two labels overlapping", len(pages), drawn)
	assert.Positive(t, drawn)
}

// recorded is a run of a history in testdata, checked as a run checks it,
// named scenario.
func recorded(t testing.TB, dir, name, scenario string) reports.Run {
	t.Helper()
	file := name + ".history.jsonl"
	if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
		b, err := os.ReadFile(filepath.Join("testdata", file))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), b, 0o644))
	}
	h, events, err := history.ReadFile(filepath.Join(dir, file))
	require.NoError(t, err)
	check, err := models.Check(h, events, time.Second)
	require.NoError(t, err)
	return reports.Run{Scenario: scenario, Lock: h.Lock, Resource: h.Resource, Seed: h.Seed, Expected: "ANY",
		Verdict: check.Result(), Matches: true, Checks: check.Verdicts(), History: file, Events: events, Seconds: 1}
}

// A report the size of the default run (306 runs) has a light index that
// opens at once, a filter, and every run's detail one click away, open.
func TestABigReportOpensLight(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	writeBigReport(t, dir)
	index := filepath.Join(dir, reports.IndexFile)
	st, err := os.Stat(index)
	require.NoError(t, err)
	assert.Less(t, st.Size(), int64(1<<20), "the index stays under 1 MB")
	took := b.open(index)
	t.Logf("index.html: %d bytes, interactive after %v", st.Size(), took)

	assert.Equal(t, 1, eval[int](b, `document.querySelectorAll("details[open] svg.timeline").length`),
		"the failure is drawn, open, on the index")
	assert.Equal(t, 306, eval[int](b, `document.querySelectorAll("tr.runrow").length`))
	// The legend is read before the 102-row matrix it explains: on the
	// first screen of a 1280×800 window. Its belief marker is in the
	// matrix: the paused holder's unfenced runs had two clients believe
	// they held the lock.
	assert.LessOrEqual(t, eval[float64](b, `document.querySelector("p.legend").getBoundingClientRect().bottom`), 800.0,
		"the legend is on the first screen")
	assert.Contains(t, eval[string](b, `document.querySelector("p.legend").textContent`), "* two clients believed they held the lock")
	assert.Positive(t, eval[int](b, `Array.from(document.querySelectorAll("table.matrix td.cell a")).filter(function (a) { return a.textContent.endsWith("*"); }).length`),
		"the matrix marks where two clients believed they held the lock")
	assert.Contains(t, eval[string](b, `document.querySelector("table.runs").textContent`), "needs member faults")
	// The filter: only the runs not as documented, then all again.
	filter := func(verdict string) {
		b.do(chromedp.SetValue(`select[name="verdict"]`, verdict),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('select[name="verdict"]').dispatchEvent(new Event("input"))`))
	}
	filter("bad")
	assert.Equal(t, "1", eval[string](b, `document.getElementById("shown").textContent`))
	assert.Equal(t, 1, eval[int](b, `Array.from(document.querySelectorAll("table.matrix tr[data-scenario]")).filter(function (r) { return !r.hidden; }).length`))
	filter("")
	assert.Equal(t, "306", eval[string](b, `document.getElementById("shown").textContent`))
	// One click from a matrix cell to an open detail.
	b.do(chromedp.Click(`table.matrix tr:nth-child(20) td.cell a`))
	require.Eventually(t, func() bool {
		return strings.HasSuffix(eval[string](b, `location.pathname`), ".html") &&
			!strings.HasSuffix(eval[string](b, `location.pathname`), reports.IndexFile)
	}, 10*time.Second, 50*time.Millisecond)
	b.do(chromedp.WaitReady(`details[open] svg.timeline`))
	assert.Contains(t, eval[string](b, `document.querySelector("a").textContent`), "every run of locklab run")
	assert.True(t, eval[bool](b, `document.querySelector('a[href$=".history.jsonl"]') !== null`), "its history is linked")
}

// writeBigReport writes to dir a report the size of the default run: 306
// runs of recorded histories, one not as documented, one skipped.
func writeBigReport(t testing.TB, dir string) {
	rep := reports.Report{Title: "locklab run", Complete: true, Seconds: 90}
	names := []string{"paused-holder-unfenced", "paused-holder-fenced", "leader-failover-unfenced",
		"random-unfenced", "isolated-asks-unfenced"}
	for i := range 306 {
		name := names[i%len(names)]
		run := recorded(t, dir, name, fmt.Sprintf("scenario-%02d", i/18))
		run.Lock, run.Resource = fmt.Sprintf("lock-%d", i/3%6), []string{"unfenced", "fenced", "etcd-guarded"}[i%3]
		run.History = filepath.Join(run.Scenario, run.Lock, run.Resource+".history.jsonl")
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(run.History)), 0o755))
		require.NoError(t, os.Link(filepath.Join(dir, name+".history.jsonl"), filepath.Join(dir, run.History)))
		if i == 7 {
			run.Matches, run.Expected = false, "PASS" // the one failure, drawn on the index
		}
		if i == 11 {
			run.Skipped, run.Events, run.History, run.Checks = "needs member faults, not available on an external cluster", nil, "", nil
		}
		rep.Runs = append(rep.Runs, run)
	}
	require.NoError(t, reports.Write(dir, rep))
}

// How long the index of a report the size of the default run takes to
// become interactive in Chromium (ms-interactive), and its size.
func BenchmarkIndexInChromium(b *testing.B) {
	br := newBrowser(b)
	dir := b.TempDir()
	writeBigReport(b, dir)
	index := filepath.Join(dir, reports.IndexFile)
	st, err := os.Stat(index)
	require.NoError(b, err)
	var total time.Duration
	n := 0
	for b.Loop() {
		total += br.open(index)
		n++
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(n), "ms-interactive")
	b.ReportMetric(float64(st.Size()), "index-bytes")
}

// The bench page loads in a real browser, its plots drawn, every line of a
// plot distinct, and its table's last column visible at 1280 px.
func TestBenchPageRendersInChromium(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	require.NoError(t, reports.WriteBench(dir, benchResults("odd<name>")))
	b.open(filepath.Join(dir, reports.BenchFile))
	assert.Equal(t, 3, eval[int](b, `document.querySelectorAll("svg.plot").length`))
	// The plots take the page's width, two to a row at 1280 px: none is
	// under 45% of the width their grid has, nor past its right edge.
	assert.True(t, eval[bool](b, `(function(){
		var grid = document.querySelector(".plots").getBoundingClientRect();
		return Array.from(document.querySelectorAll("svg.plot")).every(function(p){
			var r = p.getBoundingClientRect();
			return r.width >= 0.45 * grid.width && r.right <= grid.right + 0.5;
		});
	})()`), "the plots fill the page's width")
	assert.True(t, eval[bool](b, `(function(){
		var cells = document.querySelectorAll("table.bench tr:first-child th");
		var last = cells[cells.length - 1].getBoundingClientRect();
		return last.right <= window.innerWidth && last.width > 0;
	})()`), "the table's last column is on screen")
}

// browserTemp is a short temporary directory of the test's for Chromium's
// own temporary files (its singleton socket's directory, which a browser
// stopped by the test's end leaves behind), removed with the test.
func browserTemp(t testing.TB) string {
	dir, err := os.MkdirTemp("", "chr")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// The index says at a glance whether the run passed and, if not, why: a
// banner, the grouped matrix, a line per result not as documented with its
// reason; a cell of several runs opens the list of just those runs.
func TestTheIndexSaysWhyAtAGlance(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	rep := reports.Report{Title: "locklab run", Complete: true, Seconds: 9}
	for i := range 18 { // 3 locks × 3 resources × 2 seeds of one lesson
		run := recorded(t, dir, "paused-holder-fenced", "paused-holder")
		run.Lock, run.Resource, run.Seed = fmt.Sprintf("lock-%d", i/6), []string{"unfenced", "fenced", "etcd-guarded"}[i%3], uint64(i/3%2+1)
		rep.Runs = append(rep.Runs, run)
	}
	require.NoError(t, reports.Write(dir, rep))
	b.open(filepath.Join(dir, reports.IndexFile))
	assert.Contains(t, eval[string](b, `document.getElementById("verdict").textContent`), "As documented: every one of the 18")
	assert.Equal(t, 1, eval[int](b, `document.querySelectorAll("table.matrix tr[data-scenario]").length`), "the three locks share a row")
	assert.Contains(t, eval[string](b, `document.querySelector("table.matrix tr[data-scenario]").textContent`), "all 3 locks")
	b.do(chromedp.Click(`table.matrix tr[data-scenario] td.cell a`))
	assert.Equal(t, "6", eval[string](b, `document.getElementById("shown").textContent`), "the cell's six runs, alone")
	assert.False(t, eval[bool](b, `document.getElementById("only").hidden`))
	b.do(chromedp.Click(`#showall`))
	assert.Equal(t, "18", eval[string](b, `document.getElementById("shown").textContent`))

	rep.Runs[4].Matches, rep.Runs[4].Expected = false, "FAIL"
	require.NoError(t, reports.Write(dir, rep))
	b.open(filepath.Join(dir, reports.IndexFile))
	assert.Equal(t, "1 of 18 result(s) not as documented", eval[string](b, `document.getElementById("verdict").textContent`))
	assert.Contains(t, eval[string](b, `document.querySelector("ul.bad-list").textContent`), "paused-holder × lock-0 × fenced, seed 2")
	assert.Equal(t, 2, eval[int](b, `document.querySelectorAll("table.matrix tr[data-scenario]").length`), "the lock that differs has a row of its own")
}
