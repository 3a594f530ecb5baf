package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// console shows a run's progress as it goes. On a terminal it is one
// status line redrawn in place; elsewhere (a CI log) a status line at each
// tenth of the run, at most one in logEvery (the first and the last
// always). The status counts the results not as expected so far
// and names the latest; each is printed once, with its seed and details,
// in the summary (printSummary).
type console struct {
	w          io.Writer
	tty        bool
	start      time.Time
	now        func() time.Time
	unexpected int
	latest     string    // the latest result not as expected
	tenth      int       // the last tenth of the run a plain status line was printed at
	printed    time.Time // when it was printed (zero: none yet)
	drawn      bool      // a status line is on the terminal's last line
}

// ttyWidth is the most a terminal's status line takes.
const ttyWidth = 79

// newConsole is the console on w: a terminal's if w is one (and TERM is
// not "dumb").
func newConsole(w io.Writer) *console {
	tty := false
	if f, ok := w.(*os.File); ok && os.Getenv("TERM") != "dumb" {
		tty = isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
	}
	return &console{w: w, tty: tty, start: time.Now(), now: time.Now}
}

// finished is scenarios.Config.Finished: one configuration's results, and
// how many of the run's total configurations have finished.
func (c *console) finished(rs []scenarios.Result, done, total int) {
	for _, r := range rs {
		if r.Skipped != "" || r.Matches {
			continue
		}
		c.unexpected++
		c.latest = fmt.Sprintf("%s × %s × %s, seed %d", r.Scenario, r.Lock, r.Resource, r.Seed)
	}
	if total <= 0 {
		return
	}
	if c.tty {
		// One line, kept short of an 80-column terminal's edge: a line
		// that wrapped would not be redrawn in place.
		line := []rune(c.status(done, total))
		if len(line) > ttyWidth {
			line = append(line[:ttyWidth-1], '…')
		}
		fmt.Fprintf(c.w, "\r\x1b[K%s", string(line))
		c.drawn = true
		return
	}
	t := done * 10 / total
	if t <= c.tenth {
		return
	}
	c.tenth = t
	if now := c.now(); c.printed.IsZero() || now.Sub(c.printed) >= logEvery || done == total {
		c.printed = now
		fmt.Fprintln(c.w, c.status(done, total))
	}
}

// logEvery is the least time between two progress lines in a log: a short
// run says its progress in a few lines, a campaign of hours at each tenth.
const logEvery = 15 * time.Second

// close takes the status line off a terminal, for the summary to follow.
func (c *console) close() { c.clear() }

// clear erases the status line drawn on a terminal, if any.
func (c *console) clear() {
	if c.drawn {
		fmt.Fprint(c.w, "\r\x1b[K")
		c.drawn = false
	}
}

// status is the progress line: done of total, the results not as expected
// so far, time taken and, from the pace so far, time left.
func (c *console) status(done, total int) string {
	took := c.now().Sub(c.start)
	line := fmt.Sprintf("progress %*d/%d runs (%d%%), %d not as expected", len(fmt.Sprint(total)), done, total,
		100*done/total, c.unexpected)
	if c.latest != "" {
		line += fmt.Sprintf(" (latest: %s)", c.latest)
	}
	line += fmt.Sprintf(", %s", took.Round(time.Second))
	if done > 0 && done < total {
		left := time.Duration(float64(took) * float64(total-done) / float64(done))
		line += fmt.Sprintf(", about %s left", left.Round(time.Second))
	}
	return line
}

// verdictLine names a result not as expected in one line: what it was,
// which configuration and seed, what was expected.
func verdictLine(r scenarios.Result) string {
	mark := "UNEXPECTED"
	if r.NotJudged() {
		mark = "NOT JUDGED"
	}
	return fmt.Sprintf("%s %s × %s × %s, seed %d: %s, expected %s", mark, r.Scenario, r.Lock, r.Resource, r.Seed,
		models.Shown(r.Verdict, r.Checks), r.Expected)
}
