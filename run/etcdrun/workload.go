package etcdrun

import (
	"context"
	"errors"
	"time"

	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/run/engine"
)

// SlowHolders runs the slow-holder workload: each client of work (in name
// order, on members in turn) does one critical section in which it works
// for its time. The slowest acquires first; the others ask for the lock
// once it holds, so they wait through its work. A client whose acquire or
// section fails tries again (at most three cycles).
func (e *Env) SlowHolders(ctx context.Context, work map[string]time.Duration) error {
	return run.SlowHoldersOn(ctx, e, work)
}

// Cycle is one client's acquire → critical section → release, with its
// pause points (after-acquire among them); it reports whether the critical
// section ran.
func (e *Env) Cycle(ctx context.Context, client string) bool {
	if _, err := e.Acquire(ctx, client); err != nil {
		return false
	}
	if e.PausePoint(ctx, client, resource.AfterAcquire) != nil {
		return false
	}
	_, csErr := e.CSWork(ctx, client, 0)
	if _, err := e.ReleaseGrant(ctx, client, ""); errors.Is(err, engine.ErrStopped) {
		return false
	}
	return csErr == nil
}

// WaitLeader waits until the rest of the cluster follows a leader other
// than member, and names it.
func (e *Env) WaitLeader(ctx context.Context, member string) (string, error) {
	return e.c.WaitLeader(ctx, member)
}

// CutOff lists the run's clients that talk to the cluster through member,
// in creation order: a client of the lab's knows one member.
func (e *Env) CutOff(member string) []string { return e.clientsOn(member) }

// Leased reports whether the server has a lease of client's, as far as
// the run has seen.
func (e *Env) Leased(client string) bool { return len(e.leasesOf(client)) > 0 }

var _ run.Faulter = (*Env)(nil)
