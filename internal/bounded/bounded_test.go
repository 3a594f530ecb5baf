package bounded

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadFileReadsAFileWithinItsLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("hello"), 0o644))
	b, err := ReadFile(p, 5)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b))
}

func TestReadFileRefusesAFilePastItsLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("hello!"), 0o644))
	_, err := ReadFile(p, 5)
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.ErrorContains(t, err, p)
}

func TestReadFileRefusesWhatIsNoRegularFile(t *testing.T) {
	_, err := ReadFile(t.TempDir(), 5)
	assert.ErrorContains(t, err, "not a regular file (a directory)")
	if runtime.GOOS != "linux" {
		return
	}
	_, err = ReadFile("/dev/zero", 1<<20)
	assert.ErrorContains(t, err, "/dev/zero: not a regular file (a device)")
}

// A file that grows past the limit while it is read (its size was within
// the limit when it was opened) is cut off, not read on.
func TestAReaderStopsAtItsLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("abc"), 0o644))
	r, err := Open(p, 3)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, os.WriteFile(p, []byte("abcdef"), 0o644))
	buf := make([]byte, 10)
	n, err := r.Read(buf)
	assert.Equal(t, 3, n)
	assert.NoError(t, err)
	_, err = r.Read(buf)
	assert.True(t, errors.Is(err, ErrTooLarge), "%v", err)
}

// A FIFO is refused before it is opened: opening one waits for a writer.
func TestOpenRefusesAFIFOWithoutWaiting(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs here")
	}
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, mkfifo(p))
	_, err := ReadFile(p, 5)
	assert.ErrorContains(t, err, "not a regular file (a FIFO)")
}
