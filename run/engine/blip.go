package engine

import (
	"context"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/run"
)

// A RenewalTeller is a store that can tell, on the wire, the requests
// that keep a client's session alive though they carry no grant's value
// (ZooKeeper's pings): HoldAnswers holds a client's answers from its next
// one.
type RenewalTeller interface {
	// Renewals returns, for one new connection of a client's, a reader fed
	// each read of what the client sends, in order, that reports whether
	// that read holds a renewal; it is called before the read is
	// forwarded.
	Renewals() func([]byte) bool
}

// renewalWait bounds how long HoldAnswers waits for a holder's next
// renewal on leases of ttl: a lock that renews at all sends one within a
// TTL; one that renews nothing has its answers held from then on.
func renewalWait(ttl time.Duration) time.Duration { return ttl + time.Second }

// HoldAnswers holds client's answers for d from its next renewal — the
// next request of its that carries a grant the store follows by value
// (Store.Follow's renewed notes), or that the store tells is one
// (RenewalTeller) — then delivers them: a link that fails
// one way for a moment, from the moment the lock asks to renew its lease.
// The renewal reaches the store and renews the lease there; its answer,
// and every other, is late. A lock that renews nothing within
// renewalWait has its answers held from then. The fault's window opens as
// the hold is armed, just before the renewal that begins it, and closes d
// after that renewal. A store that follows no grant by value and tells
// no renewal (etcd's has its own hold, at the keep-alive) does not offer it.
func (e *Engine) HoldAnswers(ctx context.Context, name string, d time.Duration) (run.Outcome, error) {
	c, err := e.ready(name)
	if err != nil {
		return run.Outcome{}, err
	}
	c.mu.Lock()
	followed := len(c.notes) > 0 || c.renewals != nil
	c.mu.Unlock()
	if !followed {
		return run.Outcome{}, e.NotHere("hold-answers", "the lab knows no renewal of "+name+"'s on the wire: it follows "+
			"no grant of its by a value its requests carry")
	}
	// The window opens before the hold is armed: the renewal that begins
	// it is sent inside it, as a keep-alive the fault held, never as one
	// that renewed the lease in time after it.
	in, err := e.Apply(ctx, faults.Fault{Kind: faults.HoldAnswers, Client: name}, func(ctx context.Context, in *faults.Injection) error {
		in.SetUndo(func(context.Context) error {
			c.atRenewal.Store(false)
			for _, p := range c.links {
				p.Heal()
			}
			return nil
		})
		c.atRenewal.Store(true)
		wctx, cancel := context.WithTimeout(ctx, renewalWait(e.TTLDuration()))
		defer cancel()
		_ = poll.Until(wctx, name+"'s next renewal", pollEvery, func(context.Context) (bool, error) {
			return !c.atRenewal.Load(), nil
		})
		if c.atRenewal.Swap(false) { // no renewal came: hold from now
			for _, p := range c.links {
				p.CutAnswers()
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return run.Outcome{}, err
	}
	if err := in.UndoAfter(ctx, d); err != nil && ctx.Err() == nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.AnswersHeld, Client: name, For: d}, ctx.Err()
}

// holdAtRenewal holds every answer of c's links from now on, if a hold
// at its next renewal is armed (HoldAnswers): called with a request that
// carries a followed grant's value, before it is forwarded.
func (c *client) holdAtRenewal() {
	if c.atRenewal.CompareAndSwap(true, false) {
		for _, p := range c.links {
			p.CutAnswers()
		}
	}
}
