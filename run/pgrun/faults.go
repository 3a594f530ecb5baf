package pgrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/run"
)

// replicaMember is the member a run's streaming replica is named as; the
// primary is m1, and every client reaches whichever server is primary.
const replicaMember = "m2"

// Isolate cuts member off from the other: the streaming replication
// between the primary (m1) and its replica (m2) is held, so the primary's
// writes stop reaching the replica, while clients still reach the primary.
func (e *Env) Isolate(ctx context.Context, member string) (run.Outcome, error) {
	if e.replica == nil {
		return run.Outcome{}, e.NotHere("isolate", "a server without a replica has no peers to be cut off from")
	}
	if member != "m1" && member != replicaMember {
		return run.Outcome{}, fmt.Errorf("isolate: %s is no server here: the primary is m1, its replica %s", member, replicaMember)
	}
	link := e.replica.Replication()
	_, err := e.Apply(ctx, faults.Fault{Kind: faults.IsolateMember, Member: member}, func(_ context.Context, in *faults.Injection) error {
		link.Cut()
		in.SetTarget(member)
		in.SetUndo(func(context.Context) error {
			link.Heal()
			return nil
		})
		return nil
	})
	if err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Isolated, Member: member}, nil
}

// Kill is not available: the failover command kills the primary and
// promotes its replica.
func (e *Env) Kill(context.Context, string) (run.Outcome, error) {
	return run.Outcome{}, e.NotHere("kill", "failover kills the primary and promotes its replica")
}

// Failover kills the primary and promotes its streaming replica, as
// Patroni does when the primary stops answering; the kill is on the
// timeline from then on (the old primary never comes back in a run). Every
// session dies with the primary and no advisory lock is replicated, so the
// outcome names every holder; what replication had not carried over (a
// sequence's nextval, a guarded write) is gone too.
func (e *Env) Failover(ctx context.Context) (run.Outcome, error) {
	if e.replica == nil {
		return run.Outcome{}, errors.New("failover: this run's server has no replica")
	}
	from := "m1"
	_, err := e.Apply(ctx, faults.Fault{Kind: faults.KillMember, Member: from}, func(ctx context.Context, in *faults.Injection) error {
		in.SetTarget(from)
		in.KeepOpen() // the old primary never comes back in a run: heal does not end it
		return e.srv.FailOver(ctx, e.replica)
	})
	if err != nil {
		return run.Outcome{}, err
	}
	var lacked []string
	for _, h := range e.Holders() {
		lacked = append(lacked, h.Client)
	}
	e.Sever()                           // connections to the dead primary break; new ones reach the new
	e.sweep(context.WithoutCancel(ctx)) // the lost sessions are seen gone now, before anyone is granted again
	return run.Outcome{Kind: run.FailedOver, From: from, Member: replicaMember, Lacked: lacked}, nil
}
