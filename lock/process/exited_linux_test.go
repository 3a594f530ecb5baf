//go:build linux

package process_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/lock"
)

// (Not in internal/proc: a program started there makes the test binary a
// subreaper, and its orphan test needs the binary not to be one.)

// A program that ends itself once it learns its lock was lost — a
// fail-stop design — gave up what it held with its process: the release
// that follows is not held, and says why in the program's own words, not
// in what its runtime printed after them.
func TestAProgramThatExitedByItselfHoldsNothing(t *testing.T) {
	script := filepath.Join(t.TempDir(), "failstop.sh")
	require.NoError(t, os.WriteFile(script, []byte(`read cmd
echo "granted key=k token=7"
echo "Error: the lock was lost, ending the process" >&2
echo "    at Lock.refresh (lock.js:10:5)" >&2
echo "Node.js v18.19.0" >&2
exit 1
`), 0o644))
	l := &proc.Lock{Program: &proc.Program{Argv: []string{"sh", script}, DirVar: "LOCKLAB_DIR"}, Who: "lock"}
	t.Cleanup(func() { l.Close() })
	g, err := l.Acquire(t.Context(), func(proc.Answer) (lock.Grant, error) { return lock.Grant{Key: "k"}, nil })
	require.NoError(t, err)
	require.Eventually(t, l.Exited, 10*time.Second, 10*time.Millisecond, "the program ends by itself")

	err = l.Release(t.Context(), g)
	require.ErrorIs(t, err, lock.ErrNotHeld)
	assert.True(t, errors.Is(err, proc.ErrExited), err)
	assert.Contains(t, err.Error(), "Error: the lock was lost, ending the process")
	assert.NotContains(t, err.Error(), "Node.js")
	assert.ErrorIs(t, l.Release(t.Context(), g), lock.ErrNotHeld, "nothing is held after it")
}
