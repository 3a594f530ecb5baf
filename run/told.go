package run

import (
	"context"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
)

// followLost follows g's Grant.Lost, client's newest grant: when it closes
// — the lock telling its holder the lease is gone — the lab records it
// (history.ObservedToldLost) and WaitTold hears of it. It stops following
// when the run's monitor stops (before the final value is recorded) or the
// lab replaces client's Locker (w.quit: closing a Locker may close Lost,
// and that is the lab's doing, not the lock telling), which it records
// (history.ObservedUnfollowed).
func (e *Env) followLost(client string, w *worker, g lock.Grant) {
	var told chan struct{}
	if g.Lost != nil {
		told = make(chan struct{})
	}
	e.mu.Lock()
	w.told = told
	quit := w.quit
	e.mu.Unlock()
	if told == nil {
		return
	}
	e.following.Go(func() {
		select {
		case <-g.Lost:
			e.runs.ObserveLost(history.ObservedToldLost, client, g.Token)
			close(told)
		case <-quit:
			e.runs.ObserveLost(history.ObservedUnfollowed, client, g.Token)
		case <-e.monitorCtx.Done():
		}
	})
}

// WaitTold waits until the Grant.Lost of client's newest grant closes, for
// at most history.LostGrace: the lock tells its holder that its lease is
// gone (run it once the server has ended the lease: wait-lease-gone). A
// lock whose grants carry no Lost cannot tell, and says so at once.
func (e *Env) WaitTold(ctx context.Context, client string) (Outcome, error) {
	w, err := e.worker(client)
	if err != nil {
		return Outcome{}, err
	}
	e.mu.Lock()
	g, told := w.grant, w.told
	e.mu.Unlock()
	if g.Lost == nil || told == nil {
		return Outcome{Kind: CannotTell, Client: client}, nil // no grant yet, or none that can tell
	}
	timer := time.NewTimer(history.LostGrace)
	defer timer.Stop()
	select {
	case <-told:
		return Outcome{Kind: Told, Client: client}, nil
	case <-timer.C:
		return Outcome{Kind: NotTold, Client: client, For: history.LostGrace}, nil
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
}
