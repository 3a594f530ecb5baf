package etcdlock

import (
	"github.com/locklab/locklab/internal/proc"

	"github.com/locklab/locklab/lock"
)

// ProcessGroup is the process group of a lock run as a process, or 0 while
// none runs.
func ProcessGroup(l lock.Locker) int {
	if e, ok := l.(*execLock); ok {
		return e.Program.Group()
	}
	return 0
}

// ProcessDir is the directory of a lock run as a process, or "".
func ProcessDir(l lock.Locker) string {
	if e, ok := l.(*execLock); ok {
		return e.Program.Dir()
	}
	return ""
}

// GroupLive reports whether a process of group pg still runs (a zombie
// does not).
func GroupLive(pg int) bool { return proc.GroupLive(pg) }
