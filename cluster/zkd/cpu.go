package zkd

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/internal/serverproc"
)

// CPU is the CPU time the ensemble's running servers have used so far
// (Linux's /proc/PID/stat; an error elsewhere): what a measurement spends
// on ZooKeeper, apart from its clients'.
func (e *Ensemble) CPU() (time.Duration, error) {
	var total time.Duration
	for _, s := range e.servers {
		s.mu.Lock()
		proc := s.proc
		s.mu.Unlock()
		if proc == nil {
			continue
		}
		d, err := serverproc.CPUOf(proc.Pid(), false)
		if err != nil {
			return 0, fmt.Errorf("zkd: %s's CPU: %w", s.name, err)
		}
		total += d
	}
	return total, nil
}
