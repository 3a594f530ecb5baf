package testsize

import (
	"os"
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
