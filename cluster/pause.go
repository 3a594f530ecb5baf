package cluster

import (
	"context"

	"github.com/locklab/locklab/internal/pausegate"
)

// AnyPoint, given to Pause, stops the worker at whichever pause point it
// reaches next.
const AnyPoint = pausegate.AnyPoint

// PausePoint is called by the client's worker at each named point of its work
// (after acquire, before write, …). If a pause is armed for this point, the
// worker's link is cut and PausePoint blocks until Resume or ctx ends;
// otherwise it returns at once. It returns ctx's error once ctx has ended, so
// a pause point is also where a worker notices it should stop.
func (cl *Client) PausePoint(ctx context.Context, point string) error {
	return cl.pause.PausePoint(ctx, point)
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
func (cl *Client) Arm(point string) error { return cl.pause.Arm(point) }

// WaitPaused waits until an armed pause has stopped the worker and returns
// the point it stopped at. If ctx ends first, the pause is withdrawn.
func (cl *Client) WaitPaused(ctx context.Context) (string, error) { return cl.pause.WaitPaused(ctx) }

// Paused reports the pause point the worker is stopped at, or "".
func (cl *Client) Paused() string { return cl.pause.Paused() }

// Resume undoes Pause: the link heals first, then the worker goes on, so its
// next request reaches the cluster. Resuming a client that is not paused does
// nothing.
func (cl *Client) Resume() { cl.pause.Resume(cl.Heal) }
