package bounded

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrTooLarge is the error of a file past its limit.
var ErrTooLarge = errors.New("larger than the lab reads")

// Limits of the files the lab reads, by what they are.
const (
	// Script is the most a scenario file may hold: the catalog's longest
	// is a few kilobytes.
	Script = 1 << 20
	// Schedule is the most a run's schedule.json may hold.
	Schedule = 16 << 20
	// Results is the most a results.json may hold: a long campaign's,
	// thousands of configurations with their checks.
	Results = 256 << 20
	// History is the most one history file may hold: the longest run of
	// the catalog writes well under a megabyte.
	History = 256 << 20
)

// ReadFile reads the regular file at path, which may hold at most limit
// bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Open opens the regular file at path for reading; reading past limit
// bytes fails with ErrTooLarge. A path that names no regular file (a
// directory, a device, a FIFO, a socket) is an error.
func Open(path string, limit int64) (io.ReadCloser, error) {
	// Looked at before it is opened: opening a FIFO waits for a writer.
	if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("not a regular file (%s)", Kind(info.Mode()))}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("not a regular file (%s)", Kind(info.Mode()))}
	}
	if info.Size() > limit {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, info.Size(), limit)}
	}
	return &reader{f: f, path: path, left: limit}, nil
}

// reader reads at most left more bytes of f: a file that grows while it
// is read is cut off with ErrTooLarge, not read on.
type reader struct {
	f    *os.File
	path string
	left int64
}

func (r *reader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		// One byte more says whether the file ends here.
		var one [1]byte
		if n, _ := r.f.Read(one[:]); n > 0 {
			return 0, &fs.PathError{Op: "read", Path: r.path, Err: ErrTooLarge}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.f.Read(p)
	r.left -= int64(n)
	return n, err
}

func (r *reader) Close() error { return r.f.Close() }

// Kind names what m is when it is not a regular file ("a symbolic link",
// "a device" …), for errors about files the lab refuses.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a file"
}
