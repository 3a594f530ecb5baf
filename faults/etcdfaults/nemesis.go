package etcdfaults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/internal/poll"
)

// KeepAliveWait bounds how long a hold of a client's answers waits for
// its next keep-alive (ArmAtKeepAlive) before it holds them from then on:
// a lock renewing its lease sends one at least every TTL, a lock with no
// lease to renew sends none.
func KeepAliveWait(ttl time.Duration) time.Duration { return ttl + time.Second }

// ArmAtKeepAlive arms client's link to hold its answers from its next
// keep-alive (cluster.Client.CutAnswersAtKeepAlive) and waits, for at most
// bound, until it does: a faults.HoldAnswers fault applied then starts its
// window when the hold began. A bound that passes first is no error: the
// fault then holds the answers from when it is applied.
func (n *Nemesis) ArmAtKeepAlive(ctx context.Context, client string, bound time.Duration) error {
	cl, err := n.c.Client(client)
	if err != nil {
		return err
	}
	cl.CutAnswersAtKeepAlive()
	wctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	_ = poll.Until(wctx, "the client's next keep-alive", 5*time.Millisecond, func(context.Context) (bool, error) {
		return cl.AnswersHeld(), nil
	})
	return ctx.Err()
}

// Nemesis applies faults to one etcd cluster and records their windows
// (see faults.Windows). It is safe for concurrent use, though a schedule applies
// one fault at a time.
type Nemesis struct {
	c *cluster.Cluster
	w *faults.Windows
	// client names a fault's client as the cluster knows it.
	client func(string) string
}

// New returns a nemesis for c that records to rec (nil records nothing).
func New(c *cluster.Cluster, rec faults.Recorder) *Nemesis {
	return &Nemesis{c: c, w: faults.NewWindows(rec), client: func(s string) string { return s }}
}

// NewOn returns a nemesis for c whose windows are w's, shared with the
// faults a run applies by other means (one timeline, one count), and whose
// faults name a client as a run does: client maps that name to the
// cluster's.
func NewOn(c *cluster.Cluster, w *faults.Windows, client func(string) string) *Nemesis {
	return &Nemesis{c: c, w: w, client: client}
}

// Apply applies f to the cluster and returns once its effect holds: a
// killed leader has a successor, a paused client's worker has stopped, a
// lapsed lease is gone on the server (see faults.Windows.Apply for its window).
func (n *Nemesis) Apply(ctx context.Context, f faults.Fault) (*faults.Injection, error) {
	return n.w.Apply(ctx, f, n.apply)
}

// UndoAll undoes every active injection, newest first.
func (n *Nemesis) UndoAll(ctx context.Context) error { return n.w.UndoAll(ctx) }

// Active lists the injections not yet undone, oldest first.
func (n *Nemesis) Active() []*faults.Injection { return n.w.Active() }

// apply does f's work, setting in.Target() and in.undo as it goes, so that a
// failure part-way can be undone.
func (n *Nemesis) apply(ctx context.Context, in *faults.Injection) error {
	c, f := n.c, in.Fault()
	heal := func(context.Context) error { return c.Heal() }
	switch f.Kind {
	case faults.Partition:
		in.SetUndo(heal)
		return c.Partition(f.Groups...)
	case faults.Heal:
		return c.Heal()
	case faults.IsolateMember, faults.IsolateLeader:
		in.SetTarget(f.Member)
		if f.Kind == faults.IsolateLeader {
			l, err := c.WaitLeader(ctx)
			if err != nil {
				return err
			}
			in.SetTarget(l)
		}
		in.SetUndo(heal)
		return c.Partition([]string{in.Target()})
	case faults.KillMember, faults.KillLeader:
		in.SetTarget(f.Member)
		if f.Kind == faults.KillLeader {
			l, err := c.WaitLeader(ctx)
			if err != nil {
				return err
			}
			in.SetTarget(l)
		}
		if err := c.Kill(in.Target()); err != nil {
			return err
		}
		in.SetUndo(func(ctx context.Context) error { return c.Restart(ctx, in.Target()) })
		if f.Kind == faults.KillLeader && n.quorumLeft() {
			_, err := c.WaitLeader(ctx, in.Target())
			return err
		}
		return nil
	case faults.RestartMember:
		in.SetTarget(f.Member)
		return c.Restart(ctx, f.Member)
	case faults.MoveLeader:
		to := f.Member
		if to == "" {
			l, err := c.WaitLeader(ctx)
			if err != nil {
				return err
			}
			to = nextMember(c.Members(), l)
		}
		in.SetTarget(to)
		return c.MoveLeader(ctx, to)
	}
	return n.applyToClient(ctx, in)
}

// applyToClient handles the faults that act on one client's link.
func (n *Nemesis) applyToClient(ctx context.Context, in *faults.Injection) error {
	f := in.Fault()
	cl, err := n.c.Client(n.client(f.Client))
	if err != nil {
		return err
	}
	heal := func(context.Context) error { cl.Heal(); return nil }
	switch f.Kind {
	case faults.CutClient:
		cl.Cut()
		in.SetUndo(heal)
		return nil
	case faults.DelayClient:
		cl.SetDelay(f.Delay.Std())
		in.SetUndo(func(context.Context) error { cl.SetDelay(0); return nil })
		return nil
	case faults.PauseClient:
		pctx, cancel := context.WithTimeout(ctx, faults.DefaultWait) // a worker that never gets there must not hang a run
		at, err := cl.Pause(pctx, f.Point)
		cancel()
		if err != nil {
			return err
		}
		in.SetTarget(at)
		in.SetUndo(func(context.Context) error { cl.Resume(); return nil })
		return nil
	case faults.CrashClient:
		return cl.Crash()
	case faults.LoseAnswer:
		// The answers held from the write on are never delivered: the
		// connection breaks with them (the client hears only that), and
		// the link is healed for what comes next.
		cl.CutAnswersAtWrite()
		in.SetUndo(func(context.Context) error { cl.Sever(); cl.Heal(); return nil })
		return nil
	case faults.HoldAnswers:
		in.SetTarget("from its next keep-alive")
		if !cl.AnswersHeld() {
			in.SetTarget("from when applied: no keep-alive had come")
		}
		cl.CutAnswers()
		in.SetUndo(heal)
		return nil
	case faults.ExpireLease:
		lease := cl.Lease()
		if lease == 0 {
			return fmt.Errorf("client %s has no lease recorded (Client.SetLease)", f.Client)
		}
		in.SetTarget(fmt.Sprintf("lease %x", int64(lease)))
		if f.Mode == faults.ModeRevoke {
			_, err := n.c.Admin().Revoke(ctx, lease)
			if errors.Is(err, rpctypes.ErrLeaseNotFound) {
				// An earlier fault already ended it and the client has not
				// noticed yet: the lease is gone, as this fault asks.
				in.SetTarget(in.Target() + " (already gone)")
				in.SetAlreadyGone()
				return nil
			}
			return err
		}
		cl.Cut()
		in.SetUndo(heal)
		return n.c.WaitLeaseGone(ctx, lease)
	case faults.LoseRequest:
		return errors.New("the lab cannot tell an etcd client's requests on the wire (ZooKeeper's only: a script's acquire next=lost)")
	}
	return fmt.Errorf("unknown fault kind %q", f.Kind)
}

// quorumLeft reports whether the running members are still a majority.
func (n *Nemesis) quorumLeft() bool {
	up := 0
	for _, m := range n.c.Members() {
		if n.c.Running(m) {
			up++
		}
	}
	return up > len(n.c.Members())/2
}

// nextMember is the member after m in order, wrapping: a deterministic "other".
func nextMember(members []string, m string) string {
	i := slices.Index(members, m)
	return members[(i+1)%len(members)]
}
