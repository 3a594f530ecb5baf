package engine

import (
	"context"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/run"
)

// followLost follows g's Grant.Lost, c's newest grant: when it closes —
// the lock telling its holder the lease is gone — the lab records it
// (history.ObservedToldLost) and WaitTold hears of it. It stops following
// when the run finishes, or when c's Locker is replaced (closing a Locker
// may close Lost, and that is the lab's doing, not the lock telling),
// which it records (history.ObservedUnfollowed).
func (e *Engine) followLost(c *client, g lock.Grant) {
	var told chan struct{}
	if g.Lost != nil {
		told = make(chan struct{})
	}
	c.mu.Lock()
	c.told = told
	quit := c.quit
	c.mu.Unlock()
	if told == nil {
		return
	}
	e.following.Go(func() {
		select {
		case <-g.Lost:
			e.hs.ObserveLost(history.ObservedToldLost, c.name, g.Token)
			close(told)
		case <-quit:
			e.hs.ObserveLost(history.ObservedUnfollowed, c.name, g.Token)
		case <-e.watching.Done():
		}
	})
}

// WaitTold waits until the Grant.Lost of client's newest grant closes, for
// at most history.LostGrace: the lock tells its holder that its lease is
// gone (run it once the store has ended the lease: wait-lease-gone). A
// lock whose grants carry no Lost cannot tell, and says so at once.
func (e *Engine) WaitTold(ctx context.Context, name string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	c.mu.Lock()
	g, told := c.grant, c.told
	c.mu.Unlock()
	if g.Lost == nil || told == nil {
		return run.Outcome{Kind: run.CannotTell, Client: name}, nil
	}
	timer := time.NewTimer(history.LostGrace)
	defer timer.Stop()
	select {
	case <-told:
		return run.Outcome{Kind: run.Told, Client: name}, nil
	case <-timer.C:
		return run.Outcome{Kind: run.NotTold, Client: name, For: history.LostGrace}, nil
	case <-ctx.Done():
		return run.Outcome{}, ctx.Err()
	}
}
