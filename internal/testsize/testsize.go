package testsize

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// Env is the environment variable that asks for the long sizes.
const Env = "LOCKLAB_LONG"

// Long reports whether the long sizes were asked for (LOCKLAB_LONG set,
// and not to 0).
func Long() bool {
	v := os.Getenv(Env)
	return v != "" && v != "0"
}

// Pick is short, or long when the long sizes were asked for; it logs on t
// what the long size adds when it is not run.
func Pick(t testing.TB, short, long int, what string) int {
	if Long() {
		return long
	}
	if long > short {
		t.Logf("%d %s here; %s=1 runs %d", short, what, Env, long)
	}
	return short
}

// WaitBound lets a test package run n of its parallel tests at once (at
// least GOMAXPROCS, go test's default), unless -test.parallel was given
// or the machine is busy. For a package whose tests mostly wait — for
// leases to lapse, faults to hold, members to elect — and use a fraction
// of a core each: two at a time on two cores leaves the cores idle and the
// package last to finish. On a busy machine (less than a quarter core idle
// over a short look, or no way to look) the tests keep go test's default:
// more of them at once would starve their 1 s leases, and the lab would
// rightly call their runs spoiled. (go test's own builds and the package
// beside it leave about a core idle on two; four busy loops leave none.) Call it from TestMain, before m.Run; it parses
// the command line.
func WaitBound(n int) {
	const minIdle = 0.25
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given || n <= runtime.GOMAXPROCS(0) {
		return
	}
	idle, ok := idleCPUs(200 * time.Millisecond)
	if !ok || idle < minIdle {
		if testing.Verbose() {
			fmt.Printf("testsize: %.1f of %d CPUs idle: parallel tests %d at a time, not %d\n", idle, runtime.NumCPU(), runtime.GOMAXPROCS(0), n)
		}
		return
	}
	_ = flag.Set("test.parallel", strconv.Itoa(n))
	roomy = true
}

// roomy records that WaitBound found the machine with room to spare.
var roomy bool

// Roomy reports whether WaitBound found the machine with room to spare
// and raised how many tests run at once: a test that runs many
// configurations of its own may then run more of them at once too. False
// on a busy machine, or before WaitBound ran.
func Roomy() bool { return roomy }
