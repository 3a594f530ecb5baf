package cluster

import (
	"context"
	"fmt"
	"sync"
)

// AnyPoint, given to Pause, stops the worker at whichever pause point it
// reaches next.
const AnyPoint = "any"

// gate is where a client's worker can be frozen. The worker passes named
// pause points (PausePoint); Pause arms the gate, and the worker stops at the
// armed point until Resume.
type gate struct {
	mu      sync.Mutex
	armed   string        // point to stop at; "" when not armed
	at      string        // point where the worker stopped; "" while not stopped
	parked  chan struct{} // closed once the worker stopped
	release chan struct{} // closed by resume
	killed  bool          // the client crashed while stopped: the worker goes on with ErrCrashed
	// unmet is the parked channel of a pause the client crashed before
	// reaching: its waiter hears ErrCrashed.
	unmet  chan struct{}
	onPark func() // runs as the worker stops: cuts the client's link
	// hook, if set, runs after onPark with true, and with false as the
	// pause ends, before the worker goes on (see OnPause).
	hook func(frozen bool)
}

// OnPause has hook run when a pause stops the client's worker (with true,
// once the link is cut) and when it ends (with false, after the link
// heals): a lock that runs as a process of its own is frozen with it.
func (cl *Client) OnPause(hook func(frozen bool)) {
	cl.pause.mu.Lock()
	defer cl.pause.mu.Unlock()
	cl.pause.hook = hook
}

// PausePoint is called by the client's worker at each named point of its work
// (after acquire, before write, …). If a pause is armed for this point, the
// worker's link is cut and PausePoint blocks until Resume or ctx ends;
// otherwise it returns at once. It returns ctx's error once ctx has ended, so
// a pause point is also where a worker notices it should stop.
func (cl *Client) PausePoint(ctx context.Context, point string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g := &cl.pause
	g.mu.Lock()
	if g.armed == "" || g.at != "" || (g.armed != AnyPoint && g.armed != point) {
		g.mu.Unlock()
		return nil
	}
	g.at = point
	if g.onPark != nil {
		g.onPark()
	}
	if g.hook != nil {
		g.hook(true)
	}
	release := g.release
	close(g.parked)
	g.mu.Unlock()
	select {
	case <-release:
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.killed {
			g.killed = false
			return ErrCrashed
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Pause freezes the client the way a long GC pause or SIGSTOP freezes a
// process: its worker stops at the next pause point named point (or any
// point, with AnyPoint), and at that moment the client's link is cut so its
// lease keep-alives stop too. Pause returns once the worker has stopped, with
// the point it stopped at; if it does not get there before ctx ends, the pause
// is withdrawn and the error says where it was waited for. Pause is Arm then
// WaitPaused.
func (cl *Client) Pause(ctx context.Context, point string) (string, error) {
	if err := cl.Arm(point); err != nil {
		return "", err
	}
	return cl.WaitPaused(ctx)
}

// Arm sets a pause at point and returns at once: the worker stops when it
// next reaches it. Arm before starting the work that passes the point, so the
// worker cannot slip past it. Arming again at the same point — before or
// after the worker stopped there — is allowed and changes nothing.
func (cl *Client) Arm(point string) error {
	g := &cl.pause
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.armed == point:
		return nil
	case g.armed != "":
		return fmt.Errorf("pause %s: already paused", cl.name)
	}
	g.armed = point
	g.parked = make(chan struct{})
	g.release = make(chan struct{})
	return nil
}

// WaitPaused waits until an armed pause has stopped the worker and returns
// the point it stopped at. If ctx ends first, the pause is withdrawn.
func (cl *Client) WaitPaused(ctx context.Context) (string, error) {
	g := &cl.pause
	g.mu.Lock()
	if g.armed == "" {
		g.mu.Unlock()
		return "", fmt.Errorf("pause %s: no pause armed", cl.name)
	}
	parked, point := g.parked, g.armed
	g.mu.Unlock()
	select {
	case <-parked:
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.unmet == parked {
			return "", fmt.Errorf("pause %s: %w before it reached pause point %s", cl.name, ErrCrashed, point)
		}
		return g.at, nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.at != "" { // stopped just now
			return g.at, nil
		}
		g.armed = ""
		return "", fmt.Errorf("pause %s: waiting for its worker to reach pause point %s: %w", cl.name, point, ctx.Err())
	}
}

// Paused reports the pause point the worker is stopped at, or "".
func (cl *Client) Paused() string {
	cl.pause.mu.Lock()
	defer cl.pause.mu.Unlock()
	return cl.pause.at
}

// Resume undoes Pause: the link heals first, then the worker goes on, so its
// next request reaches the cluster. Resuming a client that is not paused does
// nothing.
func (cl *Client) Resume() {
	cl.pause.resume(cl.Heal)
}

// kill ends a pause because the client crashed: a stopped worker goes on
// with ErrCrashed, one not yet stopped is no longer waited for. The link is
// the crash's to heal.
func (g *gate) kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.armed == "" {
		return
	}
	g.killed = g.at != ""
	if !g.killed {
		g.unmet = g.parked
		close(g.parked)
	}
	close(g.release)
	g.armed, g.at = "", ""
}

// resume releases the gate, running heal first if the worker had stopped.
func (g *gate) resume(heal func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.armed == "" {
		return
	}
	if g.at != "" && heal != nil {
		heal()
	}
	if g.at != "" && g.hook != nil {
		g.hook(false)
	}
	close(g.release)
	g.armed, g.at = "", ""
}
