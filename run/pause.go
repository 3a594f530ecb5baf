package run

import (
	"context"
	"fmt"
	"sync"

	"github.com/locklab/locklab/faults"
)

// A Pause is one client's pause in a run, on any store: armed (Arm, the
// fault being applied in the background), taken hold (Wait), then ended
// (Resume, or End when the process it froze dies). The zero value holds
// no pause; methods are safe for concurrent use.
type Pause struct {
	mu      sync.Mutex
	pending chan pauseResult // the pause being applied, until Wait
	in      *faults.Injection
}

type pauseResult struct {
	in  *faults.Injection
	err error
}

// Arm applies a pause with apply in the background (apply returns once the
// client has stopped at its point, its window on the timeline) and returns
// at once: the client's own work, started after, cannot slip past the
// point. The outcome says what was armed.
func (p *Pause) Arm(client, point string, apply func() (*faults.Injection, error)) Outcome {
	ch := make(chan pauseResult, 1)
	p.mu.Lock()
	p.pending = ch
	p.mu.Unlock()
	go func() {
		in, err := apply()
		ch <- pauseResult{in, err}
	}()
	return Outcome{Kind: WillPause, Client: client, Point: point}
}

// Wait waits until the armed pause has stopped client, and says at which
// point (with "any", the first it reached).
func (p *Pause) Wait(ctx context.Context, client string) (Outcome, error) {
	p.mu.Lock()
	ch := p.pending
	p.mu.Unlock()
	if ch == nil {
		return Outcome{}, fmt.Errorf("%s has no pause armed", client)
	}
	select {
	case r := <-ch:
		p.mu.Lock()
		p.pending = nil
		if r.err == nil {
			p.in = r.in
		}
		p.mu.Unlock()
		if r.err != nil {
			return Outcome{}, r.err
		}
		return Outcome{Kind: Paused, Client: client, Point: r.in.Target()}, nil
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
}

// Resume ends client's pause: its window closes, and its work goes on.
func (p *Pause) Resume(ctx context.Context, client string) (Outcome, error) {
	p.mu.Lock()
	in := p.in
	p.in = nil
	p.mu.Unlock()
	if in == nil {
		return Outcome{}, fmt.Errorf("%s is not paused", client)
	}
	return Outcome{Kind: Resumed, Client: client}, in.Undo(ctx)
}

// End ends the pause, if one holds, with the process it froze (a crash):
// its window closes.
func (p *Pause) End(ctx context.Context) error {
	p.mu.Lock()
	in := p.in
	p.in = nil
	p.mu.Unlock()
	if in == nil {
		return nil
	}
	return in.Undo(ctx)
}
