package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/atomicfile"
)

func TestWriteIsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "f.json")
	require.NoError(t, atomicfile.Write(path, func(w io.Writer) error {
		_, err := io.WriteString(w, "whole")
		return err
	}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "whole", string(b))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())

	boom := errors.New("boom")
	err = atomicfile.Write(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	assert.ErrorIs(t, err, boom)
	b, _ = os.ReadFile(path)
	assert.Equal(t, "whole", string(b), "a failed write leaves the old file")
	entries, _ := os.ReadDir(filepath.Dir(path))
	assert.Len(t, entries, 1, "no temporary file left")
}
