package etcdrun

import (
	"context"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/faults/etcdfaults"
	"github.com/locklab/locklab/run"
)

// Isolate cuts member off from the other members until the faults are
// healed. Its clients still reach it: what it can answer on its own (a
// serializable read) it answers from what it had, and what needs the
// quorum (a write, a lease grant, a linearizable read) waits out etcd's
// request timeout. The rest of the cluster carries on and, a TTL later,
// ends the leases only the cut-off member's clients kept alive.
func (e *Env) Isolate(ctx context.Context, member string) (run.Outcome, error) {
	return run.IsolateMember(ctx, e, member)
}

// Kill kills member as a crash of its machine does (its process ends,
// its data stays) until the faults are healed, which restarts it on its
// data directory. The others elect a leader without it, if it led.
func (e *Env) Kill(ctx context.Context, member string) (run.Outcome, error) {
	return run.KillMember(ctx, e, member)
}

// KillLeader kills the member that leads when the step runs, as Kill does
// a member named (the history's fault names it): the others elect a
// leader without it, and its clients stall until heal restarts it.
func (e *Env) KillLeader(ctx context.Context) (run.Outcome, error) {
	return run.KillLeader(ctx, e)
}

// HoldAnswers holds the answers client's member sends for d from client's
// next keep-alive (see faults.HoldAnswers), then delivers them: a link
// that fails one way for a moment, from the moment the lock asks to renew
// its lease — the keep-alive renews it on the server, and its answer is
// late. On the timeline from that keep-alive (or, if none came within
// etcdfaults.KeepAliveWait, from then) to its end.
func (e *Env) HoldAnswers(ctx context.Context, client string, d time.Duration) (run.Outcome, error) {
	if e.conn(client) == nil {
		return run.Outcome{}, e.unknown(client)
	}
	if err := e.nemesis.ArmAtKeepAlive(ctx, e.clientName(client), etcdfaults.KeepAliveWait(e.TTLDuration())); err != nil {
		return run.Outcome{}, err
	}
	in, err := e.Fault(ctx, faults.Fault{Kind: faults.HoldAnswers, Client: client})
	if err != nil {
		return run.Outcome{}, err
	}
	err = in.UndoAfter(ctx, d)
	if err != nil && ctx.Err() == nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.AnswersHeld, Client: client, For: d}, ctx.Err()
}

// Fault applies a fault of the cluster's (a member's, or one the nemesis
// sets off on a client's link) through the nemesis, and a pause through
// the engine, on the run's one timeline: a fault names clients as the run
// does (c1).
func (e *Env) Fault(ctx context.Context, f faults.Fault) (*faults.Injection, error) {
	if f.Client != "" && e.conn(f.Client) == nil {
		return nil, e.unknown(f.Client)
	}
	switch f.Kind {
	case faults.PauseClient:
		return e.PauseFault(ctx, f) // the client's work passes the engine's pause points
	case faults.CrashClient:
		return nil, e.NotHere("a crash as a fault", "a crash is the script's crash step")
	}
	return e.nemesis.Apply(ctx, f)
}
