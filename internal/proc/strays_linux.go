//go:build linux

package proc

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/locklab/locklab/internal/bounded"
)

// MarkVar is the variable every program of a lock is started with, its
// value the program's own directory: each process the program starts
// inherits it, whether it stays in the program's process group or leaves
// it (setsid, a double fork, nohup), and by it the lab finds and ends
// what the program left when the program stops. A process that clears its
// environment and detaches is out of its reach.
const MarkVar = "LOCKLAB_PROGRAM"

// subreaper makes the lab the subreaper of its descendants, once: an
// orphan of a lock's program is adopted by the lab rather than by PID 1
// (which in a container may never reap it), so the lab can reap what it
// ends.
var subreaper sync.Once

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER, linux/prctl.h

func becomeSubreaper() {
	subreaper.Do(func() {
		syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0) //nolint:errcheck // best effort: without it orphans go to PID 1, and are still ended
	})
}

// endStrays ends every process that carries the mark mark (MarkVar=dir)
// and is still running — the ones a program started and left behind —
// with SIGKILL, and reaps those the lab adopted. It waits at most d for
// them to go.
func endStrays(mark string, d time.Duration) {
	strays := marked(mark)
	for _, pid := range strays {
		syscall.Kill(pid, syscall.SIGCONT) // a stopped process dies of SIGKILL too; this wakes its group's waiters
		syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(d)
	for len(strays) > 0 && time.Now().Before(deadline) {
		left := strays[:0]
		for _, pid := range strays {
			if !reaped(pid) {
				left = append(left, pid)
			}
		}
		strays = left
		if len(strays) > 0 {
			time.Sleep(2 * time.Millisecond) // the kernel says nothing when a killed process is gone: look again
		}
	}
}

// reaped reports whether pid is gone: reaped by the lab if the lab
// adopted it, or by whoever is its parent.
func reaped(pid int) bool {
	ppid, state, ok := status(pid)
	switch {
	case !ok:
		return true
	case ppid == os.Getpid() && state == "Z":
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		return false // looked at again: gone then
	case state == "Z" || state == "X":
		return true // dead; its parent reaps it
	}
	return false
}

// status reads pid's parent and state from /proc (ok false: no such
// process).
func status(pid int) (ppid int, state string, ok bool) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", false
	}
	s := string(raw)
	fs := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fs) < 2 {
		return 0, "", false
	}
	ppid, _ = strconv.Atoi(fs[1])
	return ppid, fs[0], true
}

// marked lists the processes whose environment holds mark.
func marked(mark string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(mark)
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := bounded.ReadFile(filepath.Join("/proc", e.Name(), "environ"), 4<<20)
		if err != nil {
			continue // gone, another user's, or past the bound
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}
