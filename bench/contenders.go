package bench

import (
	"context"
	"errors"

	"github.com/locklab/locklab/lock"
)

// A Contender is one measured client of a store whose bench measures its
// locks in a package of its own (see Store and RunContenders): its lock,
// and what its links counted.
type Contender interface {
	// Locker is the client's lock.
	Locker() lock.Locker
	// Wakeups is how many times so far the client was woken to look at the
	// lock again (watch events, or polls); Requests how many requests it
	// has sent so far.
	Wakeups() int64
	Requests() int64
	// Close ends the client: its lock, its connections, its links.
	Close()
}

// RunContenders makes one measurement of contenders newContender makes,
// one per client (i counts them), on one lock name of the measurement's
// own: cfg's factories are not used. A store measures its locks so
// without bench knowing it.
func RunContenders(ctx context.Context, cfg Config, newContender func(cfg Config, name string, i int) (Contender, error)) (Result, error) {
	if newContender == nil {
		return Result{}, errors.New("bench: no contender maker")
	}
	cfg.contenders = true
	return runOn(ctx, cfg, func(cfg Config, name string, i int) (contending, error) {
		c, err := newContender(cfg, name, i)
		return contending{c}, err
	})
}

// contending is a Contender as runOn measures it.
type contending struct{ c Contender }

func (c contending) acquire(ctx context.Context) (func(context.Context) error, error) {
	return acquire(ctx, c.c.Locker())
}
func (c contending) wakeups() int64  { return c.c.Wakeups() }
func (c contending) requests() int64 { return c.c.Requests() }
func (c contending) close() {
	if c.c != nil {
		c.c.Close()
	}
}
