package engine

import (
	"context"
	"errors"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/run"
)

// Pause arms a pause of client at point and returns at once: the client
// stops when its work reaches the point, its links cut (a lock run as a
// process frozen), until Resume. The pause is on the timeline from now;
// WaitPaused waits for it to take hold (run.Pause). Arming first is what
// makes a script deterministic: work started after this cannot slip past.
func (e *Engine) Pause(ctx context.Context, name, point string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	if err := c.gate.Arm(point); err != nil {
		return run.Outcome{}, err
	}
	bg := e.background(ctx)
	return c.pause.Arm(name, point, func() (*faults.Injection, error) {
		return e.windows.Apply(bg, faults.Fault{Kind: faults.PauseClient, Client: name, Point: point}, c.pausing)
	}), nil
}

// pausing waits until c's armed pause has stopped it (for faults.
// DefaultWait at most: a client that never gets there must not hang a
// run); the pause's undo resumes it.
func (c *client) pausing(ctx context.Context, in *faults.Injection) error {
	wctx, cancel := context.WithTimeout(ctx, faults.DefaultWait)
	defer cancel()
	at, err := c.gate.WaitPaused(wctx)
	if err != nil {
		return err
	}
	in.SetTarget(at)
	in.SetUndo(func(context.Context) error { c.gate.Resume(c.unpark); return nil })
	return nil
}

// PauseFault pauses client at f.Point (a faults.PauseClient) and returns
// once it has stopped there: a pause as a workload applies a fault, its
// Injection's Undo resuming the client.
func (e *Engine) PauseFault(ctx context.Context, f faults.Fault) (*faults.Injection, error) {
	c, err := e.client(f.Client)
	if err != nil {
		return nil, err
	}
	if err := c.gate.Arm(f.Point); err != nil {
		return nil, err
	}
	return e.windows.Apply(ctx, f, c.pausing)
}

// WaitPaused waits until client's armed pause has stopped it.
func (e *Engine) WaitPaused(ctx context.Context, name string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	return c.pause.Wait(ctx, name)
}

// Resume ends client's pause: its links heal, then its work goes on.
func (e *Engine) Resume(ctx context.Context, name string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	return c.pause.Resume(ctx, name)
}

// onLinks applies f to its client's links: on does it, and off, if not
// nil, undoes it (at Heal, or when the fault ends).
func (e *Engine) onLinks(ctx context.Context, f faults.Fault, on, off func(c *client)) (*faults.Injection, error) {
	c, err := e.client(f.Client)
	if err != nil {
		return nil, err
	}
	return e.windows.Apply(ctx, f, func(_ context.Context, in *faults.Injection) error {
		on(c)
		if off != nil {
			in.SetUndo(func(context.Context) error { off(c); return nil })
		}
		return nil
	})
}

// Cut cuts client's links, both ways, until Heal.
func (e *Engine) Cut(ctx context.Context, name string) (run.Outcome, error) {
	if _, err := e.onLinks(ctx, faults.Fault{Kind: faults.CutClient, Client: name}, (*client).cut, (*client).heal); err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Cut, Client: name}, nil
}

// Blip cuts client's links for d, then heals them: a link that fails for
// a moment, on the timeline from the cut to the heal.
func (e *Engine) Blip(ctx context.Context, name string, d time.Duration) (run.Outcome, error) {
	in, err := e.onLinks(ctx, faults.Fault{Kind: faults.CutClient, Client: name}, (*client).cut, (*client).heal)
	if err != nil {
		return run.Outcome{}, err
	}
	err = in.UndoAfter(ctx, d)
	if err != nil && ctx.Err() == nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Cut, Client: name, For: d}, ctx.Err()
}

// Delay has client's links delay every message by d each way until Heal.
func (e *Engine) Delay(ctx context.Context, name string, d time.Duration) (run.Outcome, error) {
	f := faults.Fault{Kind: faults.DelayClient, Client: name, Delay: faults.Duration(d)}
	setDelay := func(d time.Duration) func(c *client) {
		return func(c *client) {
			for _, p := range c.links {
				p.SetDelay(d)
			}
		}
	}
	if _, err := e.onLinks(ctx, f, setDelay(d), setDelay(0)); err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Delayed, Client: name, For: d}, nil
}

// Crash kills client's process: its links are severed, its lock ends (a
// lock renewing its lease stops), what it held is left to expire on the
// store, and it starts again holding nothing, its lock made anew at its
// next step. A pause ends with the process it froze.
func (e *Engine) Crash(ctx context.Context, name string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	_, err = e.windows.Apply(ctx, faults.Fault{Kind: faults.CrashClient, Client: name}, func(context.Context, *faults.Injection) error {
		c.cut()
		c.mu.Lock()
		c.crashes++
		c.held = false // its last grant stays on the store until it expires
		c.mu.Unlock()
		// Dead from now: recorded before it dies, for its connections close
		// as it does, which on a store whose session is its connection
		// frees its lock for the next client at once.
		e.hs.Observe(history.ObservedCrashed, name, "")
		c.gate.Kill()
		if p := c.process(); p != nil {
			p.Kill() // a process dies with its client, with no chance to clean up
		}
		var err error
		if cr, ok := e.store.(Crasher); ok {
			err = cr.Crashed(name)
		}
		for _, p := range c.links {
			p.Sever()
		}
		e.retire(c)
		// What the dead client's own goroutines sent meanwhile — a
		// connection made again to ask one last delete, to close its
		// session — waits on the cut links: it dies with the client, and
		// never reaches the store after the heal.
		for _, p := range c.links {
			p.Sever()
		}
		c.heal()
		return err
	})
	err = errors.Join(err, c.pause.End(ctx)) // a pause ends with the process it froze
	if err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Crashed, Client: name}, nil
}

// Heal undoes every fault still open: links heal, paused clients resume.
func (e *Engine) Heal(ctx context.Context) (run.Outcome, error) {
	if err := e.windows.UndoAll(ctx); err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Healed}, nil
}
