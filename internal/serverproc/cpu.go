package serverproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of a process's CPU time in /proc/PID/stat: Linux
// reports it in USER_HZ, 100 a second on every architecture it runs on.
const clockTick = 10 * time.Millisecond

// CPUOf is the CPU time, user and system, process pid has used so far,
// with its reaped children's if children (Linux's /proc; an error
// elsewhere).
func CPUOf(pid int, children bool) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command's name, in parentheses, may hold spaces: the fields
	// counted from after its closing one.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 15 {
		return 0, fmt.Errorf("/proc/%d/stat: too short", pid)
	}
	fields := f[11:13] // utime and stime, fields 14 and 15
	if children {
		fields = f[11:15] // and cutime and cstime, 16 and 17
	}
	var n int64
	for _, v := range fields {
		t, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		n += t
	}
	return time.Duration(n) * clockTick, nil
}
