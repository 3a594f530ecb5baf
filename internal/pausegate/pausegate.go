package pausegate

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// AnyPoint, given to Arm, stops the worker at whichever pause point it
// reaches next.
const AnyPoint = "any"

// ErrCrashed is what a worker stopped at a pause point hears when its client
// crashed meanwhile (see Gate.Kill).
var ErrCrashed = errors.New("the client crashed")

// Gate is one client's pause gate. The zero Gate is ready; Name names the
// client in errors, OnPark runs as the worker stops (it cuts the client's
// link, and freezes a lock run as a process). Set them before the first
// use.
type Gate struct {
	Name   string
	OnPark func()

	mu      sync.Mutex
	armed   string        // point to stop at; "" when not armed
	at      string        // point where the worker stopped; "" while not stopped
	parked  chan struct{} // closed once the worker stopped
	release chan struct{} // closed by resume
	killed  bool          // the client crashed while stopped: the worker goes on with ErrCrashed
	// wire: the worker was stopped by Reach, not at a PausePoint: nobody
	// waits on release to hear a crash.
	wire bool
	// unmet is the parked channel of a pause the client crashed before
	// reaching: its waiter hears ErrCrashed.
	unmet chan struct{}
}

// PausePoint is called by the worker at each named point of its work. If a
// pause is armed for this point, OnPark runs and PausePoint blocks until
// Resume, Kill or ctx ends; otherwise it returns at once. It returns ctx's
// error once ctx has ended, so a pause point is also where a worker
// notices it should stop.
func (g *Gate) PausePoint(ctx context.Context, point string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.mu.Lock()
	if g.armed == "" || g.at != "" || (g.armed != AnyPoint && g.armed != point) {
		g.mu.Unlock()
		return nil
	}
	g.at = point
	if g.OnPark != nil {
		g.OnPark()
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

// Reach stops the worker at point from outside its own work — the lab
// saw on the wire that it got there, and OnPark holds what it sends next
// — if a pause is armed for point and has not stopped it yet; it reports
// whether it did, and returns at once. The worker is not blocked by the
// gate: what OnPark holds holds it, until Resume or Kill.
func (g *Gate) Reach(point string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if point == "" || g.armed != point || g.at != "" {
		return false
	}
	g.at, g.wire = point, true
	if g.OnPark != nil {
		g.OnPark()
	}
	close(g.parked)
	return true
}

// Armed is the point a pause is armed at, "" when none is.
func (g *Gate) Armed() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.armed
}

// Arm sets a pause at point and returns at once: the worker stops when it
// next reaches it. Arming again at the same point — before or after the
// worker stopped there — is allowed and changes nothing.
func (g *Gate) Arm(point string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.armed == point:
		return nil
	case g.armed != "":
		return fmt.Errorf("pause %s: already paused", g.Name)
	}
	g.armed = point
	g.parked = make(chan struct{})
	g.release = make(chan struct{})
	return nil
}

// WaitPaused waits until an armed pause has stopped the worker and returns
// the point it stopped at. If ctx ends first, the pause is withdrawn.
func (g *Gate) WaitPaused(ctx context.Context) (string, error) {
	g.mu.Lock()
	if g.armed == "" {
		g.mu.Unlock()
		return "", fmt.Errorf("pause %s: no pause armed", g.Name)
	}
	parked, point := g.parked, g.armed
	g.mu.Unlock()
	select {
	case <-parked:
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.unmet == parked {
			return "", fmt.Errorf("pause %s: %w before it reached pause point %s", g.Name, ErrCrashed, point)
		}
		return g.at, nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.at != "" { // stopped just now
			return g.at, nil
		}
		g.armed = ""
		return "", fmt.Errorf("pause %s: waiting for its worker to reach pause point %s: %w", g.Name, point, ctx.Err())
	}
}

// Paused reports the pause point the worker is stopped at, or "".
func (g *Gate) Paused() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.at
}

// Kill ends a pause because the client crashed: a stopped worker goes on
// with ErrCrashed, one not yet stopped is no longer waited for.
func (g *Gate) Kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.armed == "" {
		return
	}
	g.killed = g.at != "" && !g.wire
	if g.at == "" {
		g.unmet = g.parked
		close(g.parked)
	}
	close(g.release)
	g.armed, g.at, g.wire = "", "", false
}

// Resume releases the gate, running heal first (if not nil) when the worker
// had stopped. Resuming a gate not armed does nothing.
func (g *Gate) Resume(heal func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.armed == "" {
		return
	}
	if g.at != "" && heal != nil {
		heal()
	}
	close(g.release)
	g.armed, g.at, g.wire = "", "", false
}
