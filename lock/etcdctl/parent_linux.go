package etcdctl

import (
	"os"
	"syscall"
)

// dieWithParent has this process killed when the process that started it
// — the lock's program, a shell script for the etcdctl lock — dies without
// ending it first: an etcdctl left behind would go on waiting for, or
// holding, a lock against a cluster that may be gone with the lab. The
// program's own way out (SIGTERM: etcdctl deletes its key and exits) runs
// first when the program ends it.
func dieWithParent() {
	parent := os.Getppid()
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0) //nolint:errcheck // best effort
	if os.Getppid() != parent {
		os.Exit(1) // it died before the signal was armed
	}
}
