package engine

import (
	"context"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/run"
)

// followLost follows g's Grant.Lost, c's newest grant (run.FollowLost),
// until the run finishes or c's Locker is replaced.
func (e *Engine) followLost(c *client, g lock.Grant) {
	c.mu.Lock()
	quit := c.quit
	c.mu.Unlock()
	told := run.FollowLost(&e.following, e.hs, c.name, g, quit, e.watching.Done())
	c.mu.Lock()
	c.told = told
	c.mu.Unlock()
}

// WaitTold waits until the lock tells client that its newest grant's
// lease is gone (run.WaitToldOn).
func (e *Engine) WaitTold(ctx context.Context, name string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	c.mu.Lock()
	g, told := c.grant, c.told
	c.mu.Unlock()
	return run.WaitToldOn(ctx, name, g, told)
}
