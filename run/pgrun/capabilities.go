package pgrun

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/script"
)

// Store is PostgreSQL's name as a store, and Label what its locks run on.
const (
	Store = "postgres"
	Label = "a PostgreSQL server"
)

// Capabilities are what a run on PostgreSQL can do beyond every run's,
// each with how (see scenarios.StoreKind).
func Capabilities() script.Capabilities {
	return script.Capabilities{
		script.OneStore: "one primary that keeps every session and the advisory locks it holds, streaming to a " +
			"replica asynchronously (where a lesson faults servers)",
		script.IsolateMember: "the replica's streaming replication link cut",
		script.Failover:      "the primary killed and its streaming replica promoted, as Patroni does",
		script.Restart:       "the server's postmaster killed (SIGKILL) and started again on its data directory",
		script.Durable:       "a commit's WAL written before it is acknowledged (synchronous_commit on): a killed server keeps it",
		script.Revoke:        "pg_terminate_backend of the client's session",
		script.Told:          "a keep-alive query failing once the server ended the session",
		script.HoldAnswers: "the client's link holds every answer from its session's next message (a keep-alive " +
			"query, read off the wire), for a while",
		script.KeepAlives: "every message the lock's session sends, read off its link: a session that sends is " +
			"not idle (its answers are not told apart)",
	}
}

// Expire ends client's latest session now, as the lab ends an etcd lease
// (mode revoke): pg_terminate_backend of its backend process, read off its
// link. A session whose client is cut off or waits in a query is never
// idle to the server, so mode lapse is not available.
func (e *Env) Expire(ctx context.Context, client, mode string) (run.Outcome, error) {
	if mode != faults.ModeRevoke {
		return run.Outcome{}, e.NotHere("expire mode="+mode, "PostgreSQL ends a waiting session only when told to: mode=revoke")
	}
	pid := e.pidOf(client)
	if pid == 0 {
		return run.Outcome{}, fmt.Errorf("expire: no session of %s's was seen on its link yet", client)
	}
	_, err := e.Apply(ctx, faults.Fault{Kind: faults.ExpireLease, Client: client, Mode: mode}, func(ctx context.Context, in *faults.Injection) error {
		in.SetTarget(fmt.Sprintf("backend %d", pid))
		ok, err := e.srv.Terminate(ctx, pid)
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("expire: %s's session (backend %d) had already ended", client, pid)
		}
		// The backend is told to end, and ends a moment later: the lease
		// ended is the session gone.
		wctx, cancel := context.WithTimeout(ctx, faults.DefaultWait)
		defer cancel()
		return poll.Until(wctx, client+"'s session to end", 10*time.Millisecond, func(ctx context.Context) (bool, error) {
			_, alive, err := e.holds(ctx, pid, e.key)
			return err == nil && !alive, nil
		})
	})
	if err != nil {
		return run.Outcome{}, err
	}
	if _, ok := e.watched.Of(pid); ok {
		e.sweep(ctx)
	} else {
		e.Histories().LeaseLost(leaseEnd(client, pid, e.TTLDuration()))
	}
	e.EndedWaiting(client, pid)
	return run.Outcome{Kind: run.LeaseEnded, Client: client, Mode: mode}, nil
}
