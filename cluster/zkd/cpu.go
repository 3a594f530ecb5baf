package zkd

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

// CPU is the CPU time the ensemble's running servers have used so far
// (Linux's /proc/PID/stat; an error elsewhere): what a measurement spends
// on ZooKeeper, apart from its clients'.
func (e *Ensemble) CPU() (time.Duration, error) {
	var total time.Duration
	for _, s := range e.servers {
		s.mu.Lock()
		cmd := s.cmd
		s.mu.Unlock()
		if cmd == nil || cmd.Process == nil {
			continue
		}
		d, err := processCPU(cmd.Process.Pid)
		if err != nil {
			return 0, fmt.Errorf("zkd: %s's CPU: %w", s.name, err)
		}
		total += d
	}
	return total, nil
}

// processCPU reads pid's user and system time from /proc.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command's name, in parentheses, may hold spaces: the fields
	// counted from after its closing one.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too short", pid)
	}
	var ticks int64
	for _, v := range f[11:13] { // utime and stime, fields 14 and 15
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}
