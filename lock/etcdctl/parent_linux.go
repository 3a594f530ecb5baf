package etcdctl

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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

// labGrace is how long etcdctl may go on once the lab is gone: time to
// delete its key from a cluster that outlives the lab (--endpoints).
const labGrace = 5 * time.Second

// dieWithLab ends this process labGrace after the lab (process lab) is
// gone. The lock's program, told by its parent-death signal, ends etcdctl
// with SIGTERM and waits for it; but etcdctl then deletes its key with no
// deadline, and against a cluster that died with the lab it would retry,
// and keep the program waiting, for ever. While the lab lives it bounds
// every stop itself, so nothing changes then.
func dieWithLab(lab int) {
	fd, err := unix.PidfdOpen(lab, 0)
	if err != nil {
		return // already gone, or pidfds unsupported: nothing to watch
	}
	go func() {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, -1)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		time.Sleep(labGrace) // a bound, not a wait for anything
		fmt.Fprintf(os.Stderr, "etcdctl: the lab (pid %d) is gone; left %v after it\n", lab, labGrace)
		os.Exit(1)
	}()
}
