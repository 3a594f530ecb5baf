package live_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/internal/leaks"
	"github.com/locklab/locklab/live"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/scenarios"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leaks.Known()...)
}

// startLab starts a lab on an embedded cluster, served on a loopback port.
func startLab(t *testing.T) (*live.Lab, *httptest.Server) {
	t.Helper()
	c, err := cluster.Start(t.Context(), cluster.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	lab, err := live.New(live.Config{Cluster: c, Locks: etcdlock.Builtin(), Lock: "etcd-mutex"})
	require.NoError(t, err)
	t.Cleanup(func() { lab.Close() })
	srv := httptest.NewServer(lab.Handler())
	t.Cleanup(srv.Close)
	return lab, srv
}

// chromium finds a headless-capable Chromium, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium on PATH (Debian's chromium package; .ci/run installs it): the page was not driven")
	return ""
}

// browser starts a headless Chromium of its own for the test.
func browser(t *testing.T, bin string) context.Context {
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]), chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000), chromedp.Flag("disable-gpu", true),
		chromedp.Env("TMPDIR="+browserTemp(t)))
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	return alloc
}

// tab is one browser tab on the lab's page.
type tab struct {
	t   *testing.T
	ctx context.Context
}

// open opens the page in a new tab of the browser alloc runs.
func open(t *testing.T, alloc context.Context, url string) *tab {
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	tb := &tab{t: t, ctx: ctx}
	// The first action on a tab's context starts the tab: on that
	// context, not on one that ends with the action.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url)))
	tb.until("the page shows the lab's state", `document.querySelectorAll("#verdicts li").length > 0`)
	return tb
}

func (tb *tab) run(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	require.NoError(tb.t, chromedp.Do(ctx, actions...))
}

// eval evaluates a script on the page.
func eval[T any](tb *tab, script string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](script))
	require.NoError(tb.t, err)
	return v
}

// text is the text of the element with id id.
func (tb *tab) text(id string) string {
	return eval[string](tb, `(document.getElementById(`+strconv.Quote(id)+`) || {}).textContent || ""`)
}

// pageWait bounds every wait for the page: a step normally shows in well
// under a second, but a resumed client's first write waits for its etcd
// client to reconnect, which on a loaded runner (go test ./... runs other
// packages' clusters beside this one) took over 20 s once.
const pageWait = 60 * time.Second

// until waits until script is true on the page.
func (tb *tab) until(what, script string) {
	tb.t.Helper()
	deadline := time.Now().Add(pageWait)
	for !eval[bool](tb, script) {
		if time.Now().After(deadline) {
			tb.t.Fatalf("never: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitFor waits until the text of the element with id id holds want.
func (tb *tab) waitFor(id, want string) {
	tb.t.Helper()
	deadline := time.Now().Add(pageWait)
	for !strings.Contains(tb.text(id), want) {
		if time.Now().After(deadline) {
			tb.t.Fatalf("#%s never showed %q; it shows %q (and #error %q)", id, want, tb.text(id), tb.text("error"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// click clicks a button and waits until the step log shows out. The click
// is the element's own (HTMLElement.click), not a mouse event at the
// coordinates it had a moment before: the page's verdicts and timeline
// arrive as the checks finish and move the buttons, and on a loaded
// machine a click at the old coordinates landed on nothing.
func (tb *tab) click(id, out string) {
	tb.t.Helper()
	tb.run(chromedp.WaitVisible("#" + id))
	eval[bool](tb, `(document.getElementById(`+strconv.Quote(id)+`).click(), true)`)
	tb.waitFor("steps", out)
}

// command types line into the command box and runs it.
func (tb *tab) command(line string) {
	tb.t.Helper()
	tb.run(chromedp.SetValue("#line", line), chromedp.Click("#run"))
}

// The paused-holder lesson, clicked through on the page: the overlap and
// the counter's FAIL appear on unfenced, the rejected write on fenced; a
// bad command gets the reader's one-line error and the lab goes on; a
// second browser sees the same state; the saved file, run again, gives
// the same verdicts.
func TestThePausedHolderLessonOnThePage(t *testing.T) {
	bin := chromium(t)
	_, srv := startLab(t)
	p := open(t, browser(t, bin), srv.URL+"/")

	p.click("c1-connect", "c1: connected to m1")
	p.click("c2-connect", "c2: connected to m2")
	p.click("c1-acquire", "c1: granted token=t1")
	p.click("c1-pause-before-write", "c1: will pause at before-write")
	p.click("c1-cs-async", "c1: in critical section")
	p.click("c1-wait-paused", "c1: paused at before-write, link cut")
	p.click("c1-wait-lease-gone", "server: c1's lease is gone")
	p.click("c2-acquire", "c2: granted token=t2")
	p.click("c2-critical-section", "c2: unfenced read 0 wrote 1")
	p.click("c2-release", "c2: released")

	p.command("grab c1")
	p.waitFor("error", `grab c1: unknown command "grab"`)
	p.command("resume c1")
	p.waitFor("steps", "c1: resumed")
	// The step shows from the event stream, the cleared error from the
	// command's answer: either may come first.
	p.until("a good command clears the error", `document.getElementById("error").textContent === ""`)
	p.click("c1-await", "fenced read 0 rejected: stale token")

	p.waitFor("verdict-unfenced", "FAIL")
	assert.Contains(t, p.text("verdict-unfenced"), "counter FAIL")
	p.waitFor("belief", "two clients believed they held the lock at once")
	p.waitFor("verdict-fenced", "PASS")
	p.until("the timeline shows the two holders' overlap",
		`!!(document.getElementById("view").contentDocument || document).querySelector("#view-done rect.overlap, rect.overlap")`)
	p.run(chromedp.SetValue("#resource", "fenced"))
	eval[bool](p, `document.getElementById("resource").dispatchEvent(new Event("change"))`)
	p.until("the fenced timeline names the rejected write",
		`(((document.getElementById("view").contentDocument || {}).body || {}).textContent || "").includes("rejected: token t1 < t2")`)

	p.run(chromedp.SetValue("#exercise", "fenced-refuses"))
	eval[bool](p, `document.getElementById("exercise").dispatchEvent(new Event("change"))`)
	p.waitFor("task-state", "✔ reached")

	other := open(t, browser(t, bin), srv.URL+"/") // another browser, a profile of its own
	other.waitFor("steps", "fenced read 0 rejected: stale token")
	assert.Contains(t, other.text("verdict-unfenced"), "FAIL", "a second browser sees the same lab")

	if dir := os.Getenv("LOCKLAB_SCREENSHOT"); dir != "" {
		ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		cancel()
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "live-lab.png"), png, 0o644))
	}

	// Saved, and run again as a scenario file: the same verdicts.
	resp, err := http.Get(srv.URL + "/save")
	require.NoError(t, err)
	saved, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	s, err := scenarios.FromScript("lab", "lab.txt", string(saved))
	require.NoError(t, err, "%s", saved)
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Scenarios: []string{"lab"}, Extra: []scenarios.Scenario{s},
		Locks: []string{"etcd-mutex"}, Resources: resource.Names(), Seed: 1})
	require.NoError(t, err)
	require.Len(t, sum.Results, 3)
	for _, r := range sum.Results {
		assert.True(t, r.Matches, "%s: %s, the lab saw %s: %s", r.Resource, r.Verdict, r.Expected, r.Error)
	}
}

// A catalog lesson steps through one command at a time, each with its
// narration, to the lesson's verdicts; bad input is one line and changes
// nothing; starting again empties the run.
func TestALessonStepsThroughItsScript(t *testing.T) {
	lab, srv := startLab(t)
	_, err := lab.Do(t.Context(), "acquire c1 fast")
	require.ErrorContains(t, err, `acquire c1 fast: acquire: unexpected argument "fast"`)
	require.Error(t, lab.Load("contention"), "a workload has no steps to take")
	require.NoError(t, lab.Load("paused-holder"))
	n := 0
	for {
		st, ok := lab.Next(t.Context())
		if !ok {
			break
		}
		n++
		if n == 1 {
			assert.NotEmpty(t, st.Narration, "the lesson's words come with its steps")
		}
	}
	s := lab.State()
	assert.Equal(t, "paused-holder", s.Lesson)
	assert.Zero(t, s.LessonLeft)
	assert.Len(t, s.Steps, n)
	verdict := map[string]string{}
	for _, r := range s.Resources {
		verdict[r.Name] = r.Result
	}
	assert.Equal(t, map[string]string{"unfenced": "FAIL", "fenced": "PASS", "etcd-guarded": "PASS"}, verdict)
	assert.Equal(t, "two clients believed they held the lock at once", s.Belief)

	resp, err := http.PostForm(srv.URL+"/do", map[string][]string{"line": {"grab c1"}})
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), `grab c1: unknown command "grab"`)

	out, err := lab.Do(t.Context(), "kill member=m2")
	require.NoError(t, err)
	assert.Equal(t, "m2: killed (heal restarts it)", out)
	out, err = lab.Do(t.Context(), "heal")
	require.NoError(t, err)
	assert.Equal(t, "all faults undone", out)

	require.Error(t, lab.Reset("zookeeper"))
	require.NoError(t, lab.Reset("queue"))
	s = lab.State()
	assert.Equal(t, "queue", s.Lock)
	assert.Empty(t, s.Steps)
	assert.Empty(t, s.Lesson)
}

// An exercise is reached by what the run shows, not by the buttons
// pressed: not before the paused holder writes, and then each in turn.
func TestExercisesAreJudgedFromTheRun(t *testing.T) {
	lab, _ := startLab(t)
	require.Error(t, lab.Work("fly"))
	reached := func(name string) bool {
		require.NoError(t, lab.Work(name))
		return lab.State().Reached
	}
	for _, line := range []string{"client c1 member=m1", "client c2 member=m2", "acquire c1", "pause c1 at=before-write",
		"cs c1 async", "wait-paused c1", "wait-lease-gone c1"} {
		_, err := lab.Do(t.Context(), line)
		require.NoError(t, err)
	}
	for _, x := range live.Exercises() {
		assert.False(t, reached(x.Name), "%s: nobody else holds yet", x.Name)
	}
	for _, line := range []string{"acquire c2", "cs c2"} {
		_, err := lab.Do(t.Context(), line)
		require.NoError(t, err)
	}
	assert.False(t, reached("two-holders"), "c1 has not acted on its grant since: its belief is not shown")
	assert.False(t, reached("lost-update"), "c1 has not written yet")
	for _, line := range []string{"resume c1", "await c1"} {
		_, err := lab.Do(t.Context(), line)
		require.NoError(t, err)
	}
	for _, x := range live.Exercises() {
		assert.True(t, reached(x.Name), x.Name)
	}
	require.NoError(t, lab.Work(""))
	assert.Nil(t, lab.State().Exercise)
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
