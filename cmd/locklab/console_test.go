package main

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// testConsole is a console on a buffer whose clock is *seconds after
// its start.
func testConsole(tty bool, seconds *int) (*console, *strings.Builder) {
	var out strings.Builder
	t0 := time.Unix(0, 0)
	c := &console{w: &out, tty: tty, start: t0}
	c.now = func() time.Time { return t0.Add(time.Duration(*seconds) * time.Second) }
	return c, &out
}

// In a log (not a terminal) the progress is a line at each tenth of the
// run, counting and naming what was not as expected; results themselves
// are the summary's, printed once.
func TestTheConsoleInALogPrintsATenthAtATime(t *testing.T) {
	var done int
	c, out := testConsole(false, &done)
	pass := scenarios.Result{Scenario: "paused-holder", Lock: "queue", Resource: "fenced", Verdict: models.Pass, Matches: true}
	bad := scenarios.Result{Scenario: "stale-release", Lock: "queue", Resource: "unfenced", Seed: 3, Verdict: models.Fail}
	for done = 1; done <= 40; done++ {
		rs := []scenarios.Result{pass, pass}
		if done == 7 {
			rs[1] = bad
		}
		c.finished(rs, done, 40)
	}
	c.close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	assert.Len(t, lines, 10, out.String())
	assert.Equal(t, "progress  4/40 runs (10%), 0 not as expected, 4s, about 36s left", lines[0])
	assert.Equal(t, "progress  8/40 runs (20%), 1 not as expected (latest: stale-release × queue × unfenced, seed 3), 8s, about 32s left", lines[1])
	assert.Equal(t, "progress 40/40 runs (100%), 1 not as expected (latest: stale-release × queue × unfenced, seed 3), 40s", lines[9])
	assert.NotContains(t, out.String(), "\r")
}

// On a terminal the progress is one line, redrawn in place and taken away
// before the summary.
func TestTheConsoleOnATerminalRedrawsOneLine(t *testing.T) {
	var done int
	c, out := testConsole(true, &done)
	pass := scenarios.Result{Verdict: models.Pass, Matches: true}
	for done = 1; done <= 3; done++ {
		c.finished([]scenarios.Result{pass}, done, 3)
	}
	c.close()
	assert.NotContains(t, out.String(), "\n")
	assert.Equal(t, 4, strings.Count(out.String(), "\r\x1b[K"), "three drawings, and the line taken away")
	assert.True(t, strings.HasSuffix(out.String(), "3s\r\x1b[K"), "%q", out.String())
}

// A terminal's status line never wraps: one that did could not be redrawn.
func TestATerminalsStatusLineFitsEightyColumns(t *testing.T) {
	var done int
	c, out := testConsole(true, &done)
	bad := scenarios.Result{Scenario: "expire-while-waiting-lapse", Lock: "exec:python3 examples/locks/python-etcd3/lock.py",
		Resource: "etcd-guarded", Seed: 12, Verdict: models.Error}
	done = 1
	c.finished([]scenarios.Result{bad}, done, 1000)
	line := strings.TrimPrefix(out.String(), "\r\x1b[K")
	assert.Equal(t, ttyWidth, utf8.RuneCountInString(line), line)
	assert.True(t, strings.HasSuffix(line, "…"), line)
}
