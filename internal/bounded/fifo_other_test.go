//go:build !unix

package bounded

import "errors"

// mkfifo is not offered here (the test that needs it skips).
func mkfifo(string) error { return errors.New("no FIFOs here") }
