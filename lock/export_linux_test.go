package lock

// ProcessGroup is the process group of a lock run as a process, or 0 while
// none runs.
func ProcessGroup(l Locker) int {
	e, ok := l.(*execLock)
	if !ok {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.p == nil {
		return 0
	}
	return e.p.cmd.Process.Pid
}

// ProcessDir is the directory of a lock run as a process, or "".
func ProcessDir(l Locker) string {
	e, ok := l.(*execLock)
	if !ok {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.p == nil {
		return ""
	}
	return e.p.dir
}

// GroupLive reports whether a process of group pg still runs (a zombie
// does not).
func GroupLive(pg int) bool { return groupLive(-pg) }
