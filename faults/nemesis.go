package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/poll"
)

// KeepAliveWait bounds how long a hold of a client's answers waits for
// its next keep-alive (ArmAtKeepAlive) before it holds them from then on:
// a lock renewing its lease sends one at least every TTL, a lock with no
// lease to renew sends none.
func KeepAliveWait(ttl time.Duration) time.Duration { return ttl + time.Second }

// ArmAtKeepAlive arms client's link to hold its answers from its next
// keep-alive (cluster.Client.CutAnswersAtKeepAlive) and waits, for at most
// bound, until it does: a HoldAnswers fault applied then starts its
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

// DefaultWait bounds a wait on an observable condition (a worker reaching
// its pause point, the server dropping a lease) that names no bound of its
// own: one that never comes must not hang a run.
const DefaultWait = 10 * time.Second

// Phase says whether an Event opens or closes a fault's window.
type Phase string

// The two phases of a fault on the timeline.
const (
	Start Phase = "start"
	End   Phase = "end"
)

// Event is one edge of a fault's window on the run's timeline. The Recorder
// stamps it with the run's clock, the same clock as the operations.
type Event struct {
	// ID pairs a start with its end; IDs count from 1 in apply order.
	ID    int
	Phase Phase
	Fault Fault
	// Target is what the fault resolved to when applied: the member that
	// "the leader" was, the point a pause stopped at.
	Target string
	// Err is set when applying or undoing failed; the window is then closed.
	Err error
	// AlreadyGone (expire-lease) says the server had ended the lease before
	// the fault came to end it.
	AlreadyGone bool
}

// Spec is the fault as a history records it.
func (e Event) Spec() history.FaultSpec {
	s := e.Fault.Spec()
	s.AlreadyGone = e.AlreadyGone
	return s
}

// Recorder receives fault events. The history package implements it; a
// Recorder must be safe for concurrent use and must not block for long.
type Recorder interface {
	RecordFault(Event)
}

// RecorderFunc adapts a function to Recorder.
type RecorderFunc func(Event)

// RecordFault calls f(e).
func (f RecorderFunc) RecordFault(e Event) { f(e) }

// Nemesis applies faults to one etcd cluster and records their windows
// (see Windows). It is safe for concurrent use, though a schedule applies
// one fault at a time.
type Nemesis struct {
	c *cluster.Cluster
	w *Windows
	// client names a fault's client as the cluster knows it.
	client func(string) string
}

// New returns a nemesis for c that records to rec (nil records nothing).
func New(c *cluster.Cluster, rec Recorder) *Nemesis {
	return &Nemesis{c: c, w: NewWindows(rec), client: func(s string) string { return s }}
}

// NewOn returns a nemesis for c whose windows are w's, shared with the
// faults a run applies by other means (one timeline, one count), and whose
// faults name a client as a run does: client maps that name to the
// cluster's.
func NewOn(c *cluster.Cluster, w *Windows, client func(string) string) *Nemesis {
	return &Nemesis{c: c, w: w, client: client}
}

// Apply applies f to the cluster and returns once its effect holds: a
// killed leader has a successor, a paused client's worker has stopped, a
// lapsed lease is gone on the server (see Windows.Apply for its window).
func (n *Nemesis) Apply(ctx context.Context, f Fault) (*Injection, error) {
	return n.w.Apply(ctx, f, n.apply)
}

// UndoAll undoes every active injection, newest first.
func (n *Nemesis) UndoAll(ctx context.Context) error { return n.w.UndoAll(ctx) }

// Active lists the injections not yet undone, oldest first.
func (n *Nemesis) Active() []*Injection { return n.w.Active() }

// apply does f's work, setting in.target and in.undo as it goes, so that a
// failure part-way can be undone.
func (n *Nemesis) apply(ctx context.Context, in *Injection) error {
	c, f := n.c, in.fault
	heal := func(context.Context) error { return c.Heal() }
	switch f.Kind {
	case Partition:
		in.undo = heal
		return c.Partition(f.Groups...)
	case Heal:
		return c.Heal()
	case IsolateMember, IsolateLeader:
		in.target = f.Member
		if f.Kind == IsolateLeader {
			l, err := c.WaitLeader(ctx)
			if err != nil {
				return err
			}
			in.target = l
		}
		in.undo = heal
		return c.Partition([]string{in.target})
	case KillMember, KillLeader:
		in.target = f.Member
		if f.Kind == KillLeader {
			l, err := c.WaitLeader(ctx)
			if err != nil {
				return err
			}
			in.target = l
		}
		if err := c.Kill(in.target); err != nil {
			return err
		}
		in.undo = func(ctx context.Context) error { return c.Restart(ctx, in.target) }
		if f.Kind == KillLeader && n.quorumLeft() {
			_, err := c.WaitLeader(ctx, in.target)
			return err
		}
		return nil
	case RestartMember:
		in.target = f.Member
		return c.Restart(ctx, f.Member)
	case MoveLeader:
		to := f.Member
		if to == "" {
			l, err := c.WaitLeader(ctx)
			if err != nil {
				return err
			}
			to = nextMember(c.Members(), l)
		}
		in.target = to
		return c.MoveLeader(ctx, to)
	}
	return n.applyToClient(ctx, in)
}

// applyToClient handles the faults that act on one client's link.
func (n *Nemesis) applyToClient(ctx context.Context, in *Injection) error {
	f := in.fault
	cl, err := n.c.Client(n.client(f.Client))
	if err != nil {
		return err
	}
	heal := func(context.Context) error { cl.Heal(); return nil }
	switch f.Kind {
	case CutClient:
		cl.Cut()
		in.undo = heal
		return nil
	case DelayClient:
		cl.SetDelay(f.Delay.Std())
		in.undo = func(context.Context) error { cl.SetDelay(0); return nil }
		return nil
	case PauseClient:
		pctx, cancel := context.WithTimeout(ctx, DefaultWait) // a worker that never gets there must not hang a run
		at, err := cl.Pause(pctx, f.Point)
		cancel()
		if err != nil {
			return err
		}
		in.target = at
		in.undo = func(context.Context) error { cl.Resume(); return nil }
		return nil
	case CrashClient:
		return cl.Crash()
	case LoseAnswer:
		// The answers held from the write on are never delivered: the
		// connection breaks with them (the client hears only that), and
		// the link is healed for what comes next.
		cl.CutAnswersAtWrite()
		in.undo = func(context.Context) error { cl.Sever(); cl.Heal(); return nil }
		return nil
	case HoldAnswers:
		in.target = "from its next keep-alive"
		if !cl.AnswersHeld() {
			in.target = "from when applied: no keep-alive had come"
		}
		cl.CutAnswers()
		in.undo = heal
		return nil
	case ExpireLease:
		lease := cl.Lease()
		if lease == 0 {
			return fmt.Errorf("client %s has no lease recorded (Client.SetLease)", f.Client)
		}
		in.target = fmt.Sprintf("lease %x", int64(lease))
		if f.Mode == ModeRevoke {
			_, err := n.c.Admin().Revoke(ctx, lease)
			if errors.Is(err, rpctypes.ErrLeaseNotFound) {
				// An earlier fault already ended it and the client has not
				// noticed yet: the lease is gone, as this fault asks.
				in.target += " (already gone)"
				in.gone = true
				return nil
			}
			return err
		}
		cl.Cut()
		in.undo = heal
		return n.c.WaitLeaseGone(ctx, lease)
	case LoseRequest:
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
