package pgd

import (
	"context"
	"errors"
	"time"

	"github.com/locklab/locklab/internal/serverproc"
)

// CPU is the CPU time the server has used so far (Linux's /proc; an error
// elsewhere): the postmaster's own and its reaped backends', and each live
// backend's — what a measurement spends on PostgreSQL, apart from its
// clients'.
func (s *Server) CPU() (time.Duration, error) {
	s.mu.Lock()
	proc, admin := s.proc, s.admin
	s.mu.Unlock()
	if proc == nil || admin == nil {
		return 0, errors.New("pgd: postgres is down")
	}
	total, err := serverproc.CPUOf(proc.Pid(), true)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := admin.Query(ctx, "SELECT pid FROM pg_stat_activity")
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			return 0, err
		}
		if d, err := serverproc.CPUOf(pid, false); err == nil { // a backend that just ended is counted in the reaped
			total += d
		}
	}
	return total, rows.Err()
}
