package engine

import (
	"context"

	"github.com/locklab/locklab/lock/resource"
)

// The states of a client's acquire or release under a pause at in-acquire
// or in-release (client.split), in order.
const (
	splitOff          int32 = iota // no acquire or release under such a pause
	splitAwaitWrite                // an acquire under way: its first write passes
	splitAwaitRequest              // a release under way: its first request passes
	splitHoldNext                  // the first went through: the next request stops the client
)

// splitOn moves c's acquire or release under a pause at in-acquire or
// in-release on by one read of its requests: the acquire's first write,
// or the release's first request, passes, and the next request stops the
// client before it is forwarded — its links cut, a lock run as a process
// frozen (the gate's OnPark) — so that the first has reached the store and
// the rest has not.
func (c *client) splitOn(write, asked bool) {
	switch {
	case write && c.split.CompareAndSwap(splitAwaitWrite, splitHoldNext):
	case asked && c.split.CompareAndSwap(splitAwaitRequest, splitHoldNext):
	case asked && c.split.CompareAndSwap(splitHoldNext, splitOff):
		c.gate.Reach(c.gate.Armed())
	}
}

// splitting arms c's acquire or release (point, in-acquire or in-release),
// about to be sent, if a pause is armed there and the store tells what it
// needs on the wire, and reports whether it did (see endSplit).
func (c *client) splitting(point string) bool {
	if c.asks == nil || c.gate.Armed() != point {
		return false
	}
	switch {
	case point == resource.InRelease:
		c.split.Store(splitAwaitRequest)
	case c.writes != nil:
		c.split.Store(splitAwaitWrite)
	default:
		return false
	}
	return true
}

// endSplit ends c's acquire or release under a pause at point, once the
// lab has recorded what it came to: one that sent nothing more stops the
// client now, just after it (PausePoint blocks until resumed); one stopped
// on the wire is not stopped again. A crash meanwhile changes nothing of
// what the step did.
func (c *client) endSplit(ctx context.Context, point string) {
	c.split.Store(splitOff)
	c.gate.PausePoint(ctx, point) //nolint:errcheck // see above
}
