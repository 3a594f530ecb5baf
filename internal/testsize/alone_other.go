//go:build !unix

package testsize

import (
	"errors"
	"os"
)

// lockDir cannot lock a directory here: the package runs at once.
func lockDir(string) (*os.File, error) {
	return nil, errors.New("no directory locks on this OS")
}
