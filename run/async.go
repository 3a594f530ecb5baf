package run

import (
	"context"
	"fmt"
	"sync"
)

// Async is one client's background step, on any store: Start runs it, and
// Await reads its outcome. The zero value is ready for use.
type Async struct {
	mu sync.Mutex
	ch chan Outcome
}

// Start runs step for client in the background, in bg (the run's context:
// the step outlives the one that started it), and returns at once: the
// client is now doing what doing says.
func (a *Async) Start(bg context.Context, client string, doing Doing, step func(context.Context, string) (Outcome, error)) Outcome {
	ch := make(chan Outcome, 1)
	a.mu.Lock()
	a.ch = ch
	a.mu.Unlock()
	go func() { ch <- Settled(step(bg, client)) }()
	return Outcome{Kind: Started, Client: client, Doing: doing}
}

// Await waits for client's background step and returns its outcome.
func (a *Async) Await(ctx context.Context, client string) (Outcome, error) {
	a.mu.Lock()
	ch := a.ch
	a.mu.Unlock()
	if ch == nil {
		return Outcome{}, fmt.Errorf("%s has no background step", client)
	}
	select {
	case out := <-ch:
		a.mu.Lock()
		a.ch = nil
		a.mu.Unlock()
		return out, nil
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
}

// Pending reports whether a step was started and its outcome not yet read.
func (a *Async) Pending() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ch != nil
}
