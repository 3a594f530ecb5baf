package atomicfile

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// Write creates path's directory if needed and writes path through write,
// atomically, with mode 0644. If write fails, nothing appears under path.
func Write(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// Buffered: a report's template writes a few bytes at a time, and a
	// system call each cost a run's report half its time.
	bw := bufio.NewWriterSize(tmp, 64<<10)
	if err := errors.Join(tmp.Chmod(0o644), write(bw), bw.Flush()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
