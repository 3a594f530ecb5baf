package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/run"
)

// LostAnswers is a Store that can lose the answer to a client's write, as
// a script's "acquire cN answer=lost" asks: the write reaches the store
// and takes effect, its answer never comes back, and the client hears only
// that its connection broke.
type LostAnswers interface {
	WriteTeller
	// Mark notes where the store stands before a client writes.
	Mark(ctx context.Context) (int64, error)
	// Written reports whether a write of client's has taken effect on the
	// store since mark, under the run's lock.
	Written(ctx context.Context, client string, mark int64) (ok bool, err error)
	// Where says where Written looks, for an error ("under /locklab/…").
	Where() string
}

// A WriteTeller is a store that can tell, on the wire, a client's writes:
// a pause at resource.InAcquire stops a client between its acquire's
// first write and the request after it (split.go).
type WriteTeller interface {
	// Writes returns, for one new connection of a client's, a reader fed
	// each read of what the client sends, in order, that reports whether
	// that read holds a write (a request that may change the store); it is
	// called before the read is forwarded.
	Writes() func([]byte) bool
}

// spots reads c's requests for its writes and the requests it waits on,
// where the store can tell them (see LostAnswers, RequestTeller): the
// first write after c.atWrite is armed holds every answer of c's links
// from just before it is forwarded on; the request after an armed acquire
// next=lost's write is held (nextAfterWrite), and the one after a
// release's first, under a pause at in-release (splitRelease).
func (c *client) spots(requests func([]byte)) func([]byte) {
	if c.writes == nil && c.asks == nil {
		return requests
	}
	var spot, ask func([]byte) bool
	if c.writes != nil {
		spot = c.writes()
	}
	if c.asks != nil {
		ask = c.asks()
	}
	return func(b []byte) {
		if b != nil {
			write := spot != nil && spot(b)
			asked := ask != nil && ask(b)
			if write && c.atWrite.CompareAndSwap(true, false) {
				for _, p := range c.links {
					p.CutAnswers()
				}
			}
			if spot != nil {
				c.nextAfterWrite(write, asked)
			}
			c.splitOn(write, asked)
		}
		requests(b)
	}
}

// AcquireAnswerLost has client acquire with its links failing one way
// from its first write on: the write reaches the store and takes effect
// (the lab waits to see it there), then its connections are severed with
// the answer unheard and the links heal; the acquire's outcome, whatever
// the lock makes of it, is the step's. A store that cannot spot writes on
// the wire does not have it.
func (e *Engine) AcquireAnswerLost(ctx context.Context, name string) (run.Outcome, error) {
	la, ok := e.store.(LostAnswers)
	if !ok {
		return run.Outcome{}, e.NotHere("acquire answer=lost", "the lab cannot tell its writes on the wire")
	}
	c, err := e.lostReady(name, "acquire answer=lost")
	if err != nil {
		return run.Outcome{}, err
	}
	mark, err := la.Mark(ctx)
	if err != nil {
		return run.Outcome{}, fmt.Errorf("acquire answer=lost: %w", err)
	}
	in, err := e.armSevered(ctx, faults.LoseAnswer, c, func(on bool) { c.atWrite.Store(on) })
	if err != nil {
		return run.Outcome{}, err
	}
	out, err, uerr := run.LoseAnswer(ctx, e.background(ctx), func(ctx context.Context) (run.Outcome, error) {
		return e.Acquire(ctx, name)
	}, func(wctx context.Context) error {
		err := poll.Until(wctx, name+"'s acquire to take effect on the store", pollEvery, func(ctx context.Context) (bool, error) {
			return la.Written(ctx, name, mark)
		})
		if err == nil {
			e.hs.Observe(history.ObservedAcquireWritten, name, "")
		}
		return err
	}, in.Undo)
	switch {
	case err != nil:
		return run.Outcome{}, fmt.Errorf("acquire answer=lost: the store never showed a write of %s's %s while the "+
			"acquire, which came to %q, went unanswered: %w", name, la.Where(), out, err)
	case uerr != nil:
		return run.Outcome{}, uerr
	}
	out.Effected = true
	return out, nil
}

// armSevered applies a fault of kind to c that arm(true) sets off on c's
// wire; its undo disarms it, severs c's connections — what they held is
// never delivered: they break with it — and heals c's links for what
// comes next.
func (e *Engine) armSevered(ctx context.Context, kind faults.Kind, c *client, arm func(on bool)) (*faults.Injection, error) {
	return e.windows.Apply(ctx, faults.Fault{Kind: kind, Client: c.name}, func(_ context.Context, in *faults.Injection) error {
		arm(true)
		in.SetUndo(func(context.Context) error {
			arm(false)
			for _, p := range c.links {
				p.Sever()
			}
			c.heal()
			return nil
		})
		return nil
	})
}

// ReleaseAnswerLostWhen has client release its latest grant over links
// that fail one way once the release took effect on the server behind
// each: an answer read on link i after released(ctx, i) is true is held,
// and every one after it, while the answers before it (a GET before a
// DEL, a NOSCRIPT before the script sent again) are forwarded. The lab
// waits until released is true on every link, records that it saw so,
// then severs the client's connections with the answers unheard and
// heals its links; the release's outcome, whatever the lock makes of it,
// is the step's.
func (e *Engine) ReleaseAnswerLostWhen(ctx context.Context, name string, released func(ctx context.Context, link int) (bool, error)) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	hold := func(link int) bool {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		ok, err := released(cctx, link)
		return err == nil && ok
	}
	in, err := e.armSevered(ctx, faults.LoseAnswer, c, func(on bool) {
		c.releasedMu.Lock()
		defer c.releasedMu.Unlock()
		c.released = nil
		if on {
			c.released = hold
		}
	})
	if err != nil {
		return run.Outcome{}, err
	}
	out, err, uerr := run.LoseAnswer(ctx, e.background(ctx), func(ctx context.Context) (run.Outcome, error) {
		return e.ReleaseGrant(ctx, name, "")
	}, func(wctx context.Context) error {
		err := poll.Until(wctx, name+"'s release to take effect on the store", pollEvery, func(ctx context.Context) (bool, error) {
			for i := range c.links {
				if ok, err := released(ctx, i); err != nil || !ok {
					return false, err // asked again; the last error goes in the wait's
				}
			}
			return true, nil
		})
		if err == nil {
			e.hs.Observe(history.ObservedReleased, name, "")
		}
		return err
	}, in.Undo)
	switch {
	case err != nil:
		return run.Outcome{}, fmt.Errorf("release answer=lost: the store never showed %s's release take effect "+
			"while it went unanswered (it came to %q): %w", name, out, err)
	case uerr != nil:
		return run.Outcome{}, uerr
	}
	out.Effected = true
	return out, nil
}

// holdIfReleased holds every answer of c's link from now on if a release
// whose answer is to be lost took effect on the server behind it. It asks
// under releasedMu, so that once the fault is disarmed no answer of its
// is held any more (the links are healed after).
func (c *client) holdIfReleased(link int) {
	c.releasedMu.Lock()
	defer c.releasedMu.Unlock()
	if c.released != nil && link < len(c.links) && !c.links[link].AnswersHeld() && c.released(link) {
		c.links[link].CutAnswers()
	}
}
