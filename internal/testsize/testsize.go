package testsize

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
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
// least GOMAXPROCS, go test's default), unless -test.parallel was given.
// For a package whose tests mostly wait — for leases to lapse, faults to
// hold, members to elect — and use a fraction of a core each: two at a
// time on two cores leaves the cores idle and the package last to finish.
// Call it from TestMain, before m.Run; it parses the command line.
func WaitBound(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(max(n, runtime.GOMAXPROCS(0))))
	}
}
