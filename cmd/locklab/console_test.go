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
// run, at most one in fifteen seconds but the last, counting and naming what
// was not as expected; results themselves are the summary's, printed once.
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
	assert.Len(t, lines, 4, out.String())
	assert.Equal(t, "progress  4/40 runs (10%), 0 not as expected, 4s, about 36s left", lines[0])
	assert.Equal(t, "progress 20/40 runs (50%), 1 not as expected (latest: stale-release × queue × unfenced, seed 3), 20s, about 20s left", lines[1])
	assert.Equal(t, "progress 40/40 runs (100%), 1 not as expected (latest: stale-release × queue × unfenced, seed 3), 40s", lines[3])

	// A campaign of hours: a line at each tenth.
	var seconds int
	c, out = testConsole(false, &seconds)
	for done = 1; done <= 40; done++ {
		seconds = 60 * done
		c.finished([]scenarios.Result{pass}, done, 40)
	}
	assert.Equal(t, 10, strings.Count(out.String(), "\n"), out.String())
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

// The lessons a run leaves out for its locks' stores are said a line each
// when they are few, and by name in one line when they are more; the
// resources another store keeps are said a line each either way.
func TestLessonsLeftOutAreSaidInOneLineWhenMany(t *testing.T) {
	lesson := func(name string) scenarios.LessonLeftOut {
		return scenarios.LessonLeftOut{Lesson: name, Why: name + " needs a store that can do more", Locks: []string{"zk-lock"}}
	}
	resource := "etcd-guarded guards a write with the lock's key in etcd, not run for zk-lock"
	campaign := func(lessons ...scenarios.LessonLeftOut) scenarios.Campaign {
		c := scenarios.Campaign{LeftOut: []string{resource}, LessonsLeftOut: lessons}
		for _, l := range lessons {
			c.LeftOut = append(c.LeftOut, l.Line())
		}
		return c
	}
	var few strings.Builder
	printLeftOut(&few, campaign(lesson("link-blip")))
	assert.Equal(t, "  left out (another store's): "+resource+"\n"+
		"  left out (another store's): link-blip needs a store that can do more, not run for zk-lock\n", few.String())

	var many strings.Builder
	printLeftOut(&many, campaign(lesson("link-blip"), lesson("random"), lesson("retried-release")))
	assert.Equal(t, "  left out (another store's): "+resource+"\n"+
		"  left out: 3 lessons these locks' stores cannot run (locklab list says which store runs each; --scenario NAME "+
		"says why): link-blip, random, retried-release\n", many.String())

	// Locks of two stores: each lesson is said with the locks it was left
	// out for.
	var two strings.Builder
	both := campaign(lesson("link-blip"), lesson("random"),
		scenarios.LessonLeftOut{Lesson: "failover", Why: "failover needs more", Locks: []string{"etcd-mutex", "zk-lock"}})
	both.Locks = []string{"etcd-mutex", "zk-lock"}
	printLeftOut(&two, both)
	assert.Contains(t, two.String(), "  left out: 2 lessons the store of zk-lock cannot run (")
	assert.Contains(t, two.String(), "  left out: 1 lesson the store of etcd-mutex, zk-lock cannot run (")
}
