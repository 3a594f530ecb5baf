//go:build unix

package reports_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// render loads file in headless Chromium and returns the rendered document;
// the test fails if the page logs anything to the console or a script
// fails.
func render(t *testing.T, file string) string {
	t.Helper()
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium on PATH (Debian's chromium package; .ci/run installs it): the page was not rendered")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+file)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers die with it
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var dom, logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &dom, &logs
	err := cmd.Run()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // no helper outlives the test
	require.NoError(t, err, logs.String())
	for _, line := range strings.Split(logs.String(), "\n") {
		assert.NotContains(t, line, ":CONSOLE", "the page logs nothing to the console")
		assert.NotContains(t, line, "Uncaught")
	}
	return dom.String()
}

// The paused-holder page loads in a real browser with no console message
// and no script error, and the timelines are in the rendered document.
func TestPausedHolderPageRendersInChromium(t *testing.T) {
	if chromium() == "" {
		t.Skip("no Chromium on PATH (Debian's chromium package; .ci/run installs it): the page was not rendered")
	}
	dir := t.TempDir()
	require.NoError(t, reports.Write(dir, pausedHolder(t, dir)))
	dom := render(t, filepath.Join(dir, reports.IndexFile))
	assert.Equal(t, 2, strings.Count(dom, `<svg class="timeline"`), "the timelines are in the rendered page")
	assert.Contains(t, dom, `class="overlap"`)
}

// The bench page loads in a real browser, its plots drawn.
func TestBenchPageRendersInChromium(t *testing.T) {
	if chromium() == "" {
		t.Skip("no Chromium on PATH (Debian's chromium package; .ci/run installs it): the page was not rendered")
	}
	dir := t.TempDir()
	require.NoError(t, reports.WriteBench(dir, benchResults("odd<name>")))
	dom := render(t, filepath.Join(dir, reports.BenchFile))
	assert.Equal(t, 3, strings.Count(dom, `<svg class="plot"`))
}
