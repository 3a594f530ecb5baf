package piddir_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/piddir"
)

// The directories of a process that died, of every kind, are removed by
// the next Make; one of a process that runs, one of this process and one
// named otherwise stay.
func TestADeadProcesssDirectoriesGo(t *testing.T) {
	parent := t.TempDir()
	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	deadPid := gone.Process.Pid
	mk := func(name string) string {
		p := filepath.Join(parent, name)
		require.NoError(t, os.MkdirAll(filepath.Join(p, "m1"), 0o755))
		return p
	}
	dead := mk("locklab-x-" + strconv.Itoa(deadPid) + "-123")
	live := mk("locklab-x-1-456") // PID 1 always runs
	mine := mk("locklab-x-" + strconv.Itoa(os.Getpid()) + "-789")
	old := mk("locklab-x-99999999")
	other := mk("locklab-y-" + strconv.Itoa(deadPid) + "-124")
	hand := mk("locklab-my-notes-" + strconv.Itoa(deadPid))

	made, err := piddir.Make(parent, "x")
	require.NoError(t, err)
	assert.Regexp(t, `^locklab-x-`+strconv.Itoa(os.Getpid())+`-\d+$`, filepath.Base(made))
	assert.NoDirExists(t, dead)
	assert.NoDirExists(t, other, "a dead process's directory of another kind")
	for _, p := range []string{live, mine, old, hand, made} {
		assert.DirExists(t, p)
	}
}
