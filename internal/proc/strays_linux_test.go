//go:build linux

package proc

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A lock's program that starts children which leave its process group —
// setsid, a double fork, nohup — leaves none of them once it is stopped:
// they carry the program's mark, and the lab ends and reaps them.
func TestWhatAProgramDetachesEndsWithIt(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	script := filepath.Join(t.TempDir(), "lock.sh")
	require.NoError(t, os.WriteFile(script, []byte(`
setsid sleep 1000 & echo $! >> "$PIDS"
( setsid sh -c 'sleep 1000 & echo $! >> "$PIDS"' & ) 
nohup sleep 1000 >/dev/null 2>&1 & echo $! >> "$PIDS"
while [ "$(wc -l < "$PIDS")" -lt 3 ]; do sleep 0.01; done
read x
echo granted key=k
while :; do sleep 0.05; done
`), 0o644))
	p := &Program{Argv: []string{"sh", script}, DirVar: "LOCKLAB_DIR", Env: []string{"PIDS=" + pids}}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	a, err := p.Ask(ctx, "acquire")
	require.NoError(t, err)
	require.Equal(t, "granted", a.Verb)
	mark := MarkVar + "=" + p.Dir()
	children := readPids(t, pids)
	require.Len(t, children, 3)
	for _, pid := range children {
		require.True(t, alive(pid), "child %d runs before the stop", pid)
	}
	began := time.Now()
	require.NoError(t, p.Close())
	t.Logf("stopped in %v", time.Since(began))
	for _, pid := range children {
		assert.False(t, alive(pid), "child %d outlived its program", pid)
		syscall.Kill(pid, syscall.SIGKILL) // whatever the assertion says, nothing is left
	}
	assert.Empty(t, marked(mark), "no process carries a stopped program's mark")
}

// readPids reads the process numbers a script wrote, one a line.
func readPids(t *testing.T, file string) []int {
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var out []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		out = append(out, pid)
	}
	return out
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	_, state, ok := status(pid)
	return ok && state != "Z" && state != "X"
}
