//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Self is the CPU time, user and system, that this process has used so far,
// every thread together.
func Self() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
