//go:build unix

package piddir

import (
	"errors"
	"syscall"
)

// dead reports whether no process numbered pid runs.
func dead(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
