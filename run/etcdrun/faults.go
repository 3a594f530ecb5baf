package etcdrun

import (
	"context"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/run"
)

// Pause arms a pause of client at point and returns at once; the fault is
// applied through the nemesis (so it is on the timeline) and WaitPaused
// waits for it (run.Pause). Arming first is what makes a script
// deterministic: start the work that passes the point after this, and the
// worker cannot slip past.
func (e *Env) Pause(ctx context.Context, client, point string) (run.Outcome, error) {
	w, err := e.worker(client)
	if err != nil {
		return run.Outcome{}, err
	}
	if err := w.cl.Arm(point); err != nil {
		return run.Outcome{}, err
	}
	bg := e.background(ctx)
	return w.pause.Arm(client, point, func() (*faults.Injection, error) {
		return e.nemesis.Apply(bg, faults.Fault{Kind: faults.PauseClient, Client: w.cl.Name(), Point: point})
	}), nil
}

// WaitPaused waits until client's armed pause has stopped it.
func (e *Env) WaitPaused(ctx context.Context, client string) (run.Outcome, error) {
	w, err := e.worker(client)
	if err != nil {
		return run.Outcome{}, err
	}
	return w.pause.Wait(ctx, client)
}

// Crash kills client as SIGKILL kills a process, and starts it again with
// nothing: see cluster.Client.Crash. Its lease lives on on the server until
// its TTL ends; whatever it had under way never completes.
func (e *Env) Crash(ctx context.Context, client string) (run.Outcome, error) {
	w, err := e.worker(client)
	if err != nil {
		return run.Outcome{}, err
	}
	if _, err := e.Fault(ctx, faults.Fault{Kind: faults.CrashClient, Client: client}); err != nil {
		return run.Outcome{}, err
	}
	// A pause ends with the process it froze: its window closes.
	return run.Outcome{Kind: run.Crashed, Client: client}, w.pause.End(ctx)
}

// Resume undoes Pause.
func (e *Env) Resume(ctx context.Context, client string) (run.Outcome, error) {
	w, err := e.worker(client)
	if err != nil {
		return run.Outcome{}, err
	}
	return w.pause.Resume(ctx, client)
}

// Cut cuts client's link to the cluster, both ways, until Heal.
func (e *Env) Cut(ctx context.Context, client string) (run.Outcome, error) {
	if _, err := e.Fault(ctx, faults.Fault{Kind: faults.CutClient, Client: client}); err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Cut, Client: client}, nil
}

// Delay has client's link delay every message by d each way until the
// faults are healed: a slow link, not a cut one. Grants, keep-alives and
// their answers all arrive late.
func (e *Env) Delay(ctx context.Context, client string, d time.Duration) (run.Outcome, error) {
	if _, err := e.Fault(ctx, faults.Fault{Kind: faults.DelayClient, Client: client, Delay: faults.Duration(d)}); err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Delayed, Client: client, For: d}, nil
}

// Isolate cuts member off from the other members until the faults are
// healed. Its clients still reach it: what it can answer on its own (a
// serializable read) it answers from what it had, and what needs the
// quorum (a write, a lease grant, a linearizable read) waits out etcd's
// request timeout. The rest of the cluster carries on and, a TTL later,
// ends the leases only the cut-off member's clients kept alive.
func (e *Env) Isolate(ctx context.Context, member string) (run.Outcome, error) {
	if _, err := e.Fault(ctx, faults.Fault{Kind: faults.IsolateMember, Member: member}); err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Isolated, Member: member}, nil
}

// Kill kills member as a crash of its machine does (its process ends,
// its data stays) until the faults are healed, which restarts it on its
// data directory. The others elect a leader without it, if it led.
func (e *Env) Kill(ctx context.Context, member string) (run.Outcome, error) {
	if _, err := e.Fault(ctx, faults.Fault{Kind: faults.KillMember, Member: member}); err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Killed, Member: member}, nil
}

// Blip cuts client's link both ways for d, then heals it: a link that
// fails for a moment. The fault is on the timeline, from the cut to the
// heal.
func (e *Env) Blip(ctx context.Context, client string, d time.Duration) (run.Outcome, error) {
	return e.blip(ctx, faults.CutClient, client, d, run.Cut)
}

// HoldAnswers holds the answers client's member sends for d from client's
// next keep-alive (see faults.HoldAnswers), then delivers them: a link
// that fails one way for a moment, from the moment the lock asks to renew
// its lease — the keep-alive renews it on the server, and its answer is
// late. On the timeline from that keep-alive (or, if none came within
// faults.KeepAliveWait, from then) to its end.
func (e *Env) HoldAnswers(ctx context.Context, client string, d time.Duration) (run.Outcome, error) {
	w, err := e.worker(client)
	if err != nil {
		return run.Outcome{}, err
	}
	ttl := time.Duration(e.TTL()) * time.Second
	if err := e.nemesis.ArmAtKeepAlive(ctx, w.cl.Name(), faults.KeepAliveWait(ttl)); err != nil {
		return run.Outcome{}, err
	}
	return e.blip(ctx, faults.HoldAnswers, client, d, run.AnswersHeld)
}

// blip applies a fault of kind to client's link, holds it for d (once it
// is in place) and undoes it.
func (e *Env) blip(ctx context.Context, kind faults.Kind, client string, d time.Duration, says run.Kind) (run.Outcome, error) {
	in, err := e.Fault(ctx, faults.Fault{Kind: kind, Client: client})
	if err != nil {
		return run.Outcome{}, err
	}
	err = in.UndoAfter(ctx, d)
	if err != nil && ctx.Err() == nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: says, Client: client, For: d}, ctx.Err()
}

// Heal undoes every fault still applied.
func (e *Env) Heal(ctx context.Context) (run.Outcome, error) {
	if err := e.nemesis.UndoAll(ctx); err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Healed}, nil
}

// Fault applies a fault whose client names are the run's (c1), not the
// cluster's.
func (e *Env) Fault(ctx context.Context, f faults.Fault) (*faults.Injection, error) {
	if f.Client != "" {
		w, err := e.worker(f.Client)
		if err != nil {
			return nil, err
		}
		f.Client = w.cl.Name()
	}
	return e.nemesis.Apply(ctx, f)
}
