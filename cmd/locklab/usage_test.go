package main

import (
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/scenarios"
)

// Every command answers --help with its flags, on standard output, exit 0.
func TestEveryCommandHasHelp(t *testing.T) {
	for _, cmd := range []string{"run", "check", "replay", "bench", "explore", "merge", "lab", "list", "explain", "version"} {
		for _, h := range []string{"--help", "-h"} {
			code, stdout, stderr := locklab(t, t.Context(), cmd, h)
			assert.Equal(t, exitOK, code, "%s %s: %s", cmd, h, stderr)
			assert.Empty(t, stderr)
			assert.Contains(t, stdout, "Usage: locklab "+cmd)
		}
	}
	_, stdout, _ := locklab(t, t.Context(), "run", "--help")
	for _, flag := range []string{"-scenario", "-lock", "-resource", "-seed", "-expect", "-endpoints", "CI gate"} {
		assert.Contains(t, stdout, flag)
	}
}

// The top-level usage names every flag of every command, as each
// command's --help lists them: a flag added to a command and not to the
// usage fails here.
func TestTheUsageNamesEveryFlag(t *testing.T) {
	_, _, usageText := locklab(t, t.Context())
	flagLine := regexp.MustCompile(`(?m)^  -([a-z][a-z-]*)`)
	for _, cmd := range []string{"run", "check", "replay", "bench", "explore", "merge", "lab", "list", "explain"} {
		_, help, _ := locklab(t, t.Context(), cmd, "--help")
		for _, m := range flagLine.FindAllStringSubmatch(help, -1) {
			assert.Regexp(t, `--`+regexp.QuoteMeta(m[1])+`\b`, usageText, "locklab %s --%s is not in the usage", cmd, m[1])
		}
	}
}

// The version, asked for as people do: the lab's version and the Go
// toolchain it was built with, exit 0; an argument after it is bad usage.
func TestVersion(t *testing.T) {
	for _, v := range []string{"version", "--version", "-v"} {
		code, stdout, stderr := locklab(t, t.Context(), v)
		assert.Equal(t, exitOK, code, stderr)
		assert.Regexp(t, `^locklab `+regexp.QuoteMeta(scenarios.Version)+` \(revision (not recorded|[0-9a-f]{40}(\+modified)?), `+
			regexp.QuoteMeta(runtime.Version()+", "+runtime.GOOS+"/"+runtime.GOARCH)+`\)\n$`, stdout)
	}
	code, _, stderr := locklab(t, t.Context(), "version", "x")
	assert.Equal(t, exitUsage, code)
	oneLine(t, stderr, `version: unexpected argument "x"`)
}

func TestListAndExplain(t *testing.T) {
	code, out, _ := locklab(t, t.Context(), "list")
	assert.Equal(t, exitOK, code)
	for _, name := range scenarios.Names() {
		assert.Contains(t, out, name)
	}
	for _, s := range []string{"etcd-mutex", "queue", "fenced", "pause-client"} {
		assert.Contains(t, out, s)
	}
	// One column for every name, the longest included; every fault says
	// what it does.
	col := -1
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, "  ") {
			continue // a heading
		}
		name := strings.Fields(line)[0]
		if strings.HasPrefix(line, "   ") {
			name = "" // a known-bad lock's second line
		}
		at := len(line) - len(strings.TrimLeft(line[2+len(name):], " "))
		if col < 0 {
			col = at
		}
		assert.Equal(t, col, at, "aligned: %q", line)
	}
	assert.Regexp(t, `(?m)^  expire-while-waiting-lapse +on etcd, zookeeper: The same lesson`, out)
	assert.Regexp(t, `(?m)^  kill-leader +crash whichever member leads`, out)
	code, out, _ = locklab(t, t.Context(), "explain", "paused-holder")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "A lease is not a lock")
	assert.Contains(t, out, "> pause c1 at=before-write")
	code, out, _ = locklab(t, t.Context(), "explain", "etcd-election")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "two-leaders")
	assert.Contains(t, out, "phantom-leader")
	assert.Contains(t, out, "  - expire-while-waiting: the expired-waiter check")
	code, out, _ = locklab(t, t.Context(), "explain", "etcd-mutex")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "  - lost-acquire: the liveness check\n  - retried-release: the validity check")
	assert.Contains(t, out, "See it: locklab run --lock etcd-mutex --scenario lost-acquire,retried-release")
	code, out, _ = locklab(t, t.Context(), "explain", "etcd-22082")
	assert.Equal(t, exitOK, code, "a known-bad lock is explained too")
	assert.Contains(t, out, "etcd-22082: a known-bad lock")
	assert.Contains(t, out, "Caught by retried-release (the validity check)")
	assert.Contains(t, out, "See it caught: locklab run --lock etcd-22082 --scenario retried-release")
}
