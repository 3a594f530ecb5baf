package zkrun

import (
	"context"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/run"
)

// Isolate cuts member off from the other servers until heal: its clients
// still reach it, and it stops serving them once it sees the quorum gone
// (they move to another server, within their session).
func (e *Env) Isolate(ctx context.Context, member string) (run.Outcome, error) {
	i, err := e.member(member)
	if err != nil {
		return run.Outcome{}, err
	}
	_, err = e.Apply(ctx, faults.Fault{Kind: faults.IsolateMember, Member: member}, func(_ context.Context, in *faults.Injection) error {
		e.ens.Isolate(i)
		in.SetTarget(member)
		in.SetUndo(func(context.Context) error { e.ens.HealPeers(); return nil })
		return nil
	})
	if err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Isolated, Member: member}, nil
}

// Kill kills member as a crash of its machine does until heal, which
// starts it again on its data.
func (e *Env) Kill(ctx context.Context, member string) (run.Outcome, error) {
	i, err := e.member(member)
	if err != nil {
		return run.Outcome{}, err
	}
	_, err = e.Apply(ctx, faults.Fault{Kind: faults.KillMember, Member: member}, func(_ context.Context, in *faults.Injection) error {
		e.ens.Kill(i)
		in.SetTarget(member)
		in.SetUndo(func(ctx context.Context) error { return e.ens.Restart(ctx, i) })
		return nil
	})
	if err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Killed, Member: member}, nil
}
