package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A lock run as a process that cannot take the lock alone on a healthy
// cluster — a missing program, one that crashes at start (a missing
// module) — stops the run before it starts: one line naming the lock and
// what it said, exit 2, no report.
func TestABrokenProcessLockStopsTheRunAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		return "exec:sh " + path
	}
	for _, tc := range []struct {
		lock string
		want []string
	}{
		{"exec:" + filepath.Join(dir, "no-such-program"), []string{"preflight", "no-such-program"}},
		{script("crash.sh", "echo 'ModuleNotFoundError: etcd3' >&2; exit 1\n"), []string{"preflight", "could not acquire", "ModuleNotFoundError: etcd3"}},
	} {
		out := filepath.Join(dir, "out")
		code, _, stderr := locklab(t, t.Context(), "run", "--lock", tc.lock, "--scenario", "paused-holder", "--out", out)
		assert.Equal(t, exitUsage, code, tc.lock)
		oneLine(t, stderr, append([]string{"--lock " + tc.lock}, tc.want...)...)
		assert.NoDirExists(t, out, "nothing ran: no report")
	}

	// Ctrl-C while the preflight waits for a program that never answers:
	// interrupted (3), not a lock found wanting (2).
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out := filepath.Join(dir, "interrupted")
	code, _, stderr := locklab(t, ctx, "run", "--lock", script("silent.sh", "exec sleep 60\n"), "--scenario", "paused-holder", "--out", out)
	assert.Equal(t, exitUndecided, code, stderr)
	oneLine(t, stderr, "interrupted before the run began")
	assert.NoDirExists(t, out, "nothing ran: no report")
}
