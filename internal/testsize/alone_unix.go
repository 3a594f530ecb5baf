//go:build unix

package testsize

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockDir opens dir and takes its exclusive flock, waiting for it.
func lockDir(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
