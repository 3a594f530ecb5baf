package engine

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/run"
)

// A RequestTeller is a store that can tell, on the wire, the requests a
// client waits on an answer to (its keep-alives are none): a pause at
// resource.InRelease stops a client between its release's first request
// and the next (split.go).
type RequestTeller interface {
	// Requests returns, for one new connection of a client's, a reader fed
	// each read of what the client sends, in order, that reports whether
	// that read holds a request the client waits on an answer to; it is
	// called before the read is forwarded.
	Requests() func([]byte) bool
}

// LostRequests is a LostAnswers store that can also tell requests: a
// script's "acquire cN next=lost" loses the request an acquire sends after
// its write, with the client's connections.
type LostRequests interface {
	LostAnswers
	RequestTeller
}

// The states of a client's acquire next=lost, in order (client.afterWrite).
const (
	nextOff     int32 = iota // not armed
	nextArmed                // waiting for the acquire's write
	nextWritten              // the write went through: the next request is held
	nextCut                  // held: the client's links are cut
)

// nextAfterWrite moves c's acquire next=lost on by one read of its
// requests: a write arms the cut, and the request after it is held — c's
// links cut before it is forwarded — and c.requestCut closed.
func (c *client) nextAfterWrite(write, asked bool) {
	switch {
	case write:
		c.afterWrite.CompareAndSwap(nextArmed, nextWritten)
	case asked && c.afterWrite.CompareAndSwap(nextWritten, nextCut):
		for _, p := range c.links {
			p.Cut()
		}
		c.mu.Lock()
		cut := c.requestCut
		c.mu.Unlock()
		close(cut)
	}
}

// AcquireNextLost has client acquire while its links hold the first
// request it sends after its write: the write reaches the store and is
// answered, the request after it never arrives, and the client's
// connections are then severed with that request unanswered; the links
// heal for what comes next. The acquire's outcome, whatever the lock
// makes of it (an error at once, or a wait it rides on to its deadline),
// is the step's. An acquire that asked nothing after a write loses
// nothing: the history then shows no lost request, and the lesson's
// effect is missing. A store that cannot tell requests on the wire does
// not have it.
func (e *Engine) AcquireNextLost(ctx context.Context, name string) (run.Outcome, error) {
	if _, ok := e.store.(LostRequests); !ok {
		return run.Outcome{}, e.NotHere("acquire next=lost", "the lab cannot tell its requests on the wire")
	}
	c, err := e.lostReady(name, "acquire next=lost")
	if err != nil {
		return run.Outcome{}, err
	}
	cut := make(chan struct{})
	c.mu.Lock()
	c.requestCut = cut
	c.mu.Unlock()
	in, err := e.armSevered(ctx, faults.LoseRequest, c, func(on bool) {
		state := nextOff
		if on {
			state = nextArmed
		}
		c.afterWrite.Store(state)
	})
	if err != nil {
		return run.Outcome{}, err
	}
	var (
		out  run.Outcome
		aerr error
	)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		out, aerr = e.Acquire(e.background(ctx), name)
	}()
	select {
	case <-cut:
		in.SetTarget("its request after its write")
		e.hs.Observe(history.ObservedRequestLost, name, "")
	case <-ended:
		in.SetTarget("nothing: the acquire ended asking nothing after a write")
	case <-ctx.Done():
	}
	uerr := in.Undo(ctx)
	<-ended
	if uerr != nil {
		return run.Outcome{}, uerr
	}
	return run.Settled(out, aerr), nil
}

// lostReady is client, ready for a step that loses what its acquire
// sends or hears: holding nothing, with no background step under way.
func (e *Engine) lostReady(name, what string) (*client, error) {
	c, err := e.client(name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	held := c.held
	c.mu.Unlock()
	switch {
	case held:
		return nil, fmt.Errorf("%s: %s already holds the lock", what, name)
	case c.async.Pending():
		return nil, fmt.Errorf("%s: %s has a background step under way (await it first)", what, name)
	}
	return c, nil
}
