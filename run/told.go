package run

import (
	"context"
	"sync"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
)

// FollowLost follows g's Grant.Lost, client's newest grant, on wg, and
// returns what WaitToldOn waits on (nil when g has no Lost: its lock cannot
// tell). When Lost closes — the lock telling its holder the lease is gone
// — hs records it (history.ObservedToldLost) and the channel closes. It
// stops following when stop ends (the run's watchers stopping, before the
// final value is recorded) or quit does: the lab replaced client's Locker
// (closing a Locker may close Lost, and that is the lab's doing, not the
// lock telling), which hs records (history.ObservedUnfollowed).
func FollowLost(wg *sync.WaitGroup, hs Histories, client string, g lock.Grant, quit, stop <-chan struct{}) chan struct{} {
	if g.Lost == nil {
		return nil
	}
	told := make(chan struct{})
	wg.Go(func() {
		select {
		case <-g.Lost:
			hs.ObserveLost(history.ObservedToldLost, client, g.Token)
			close(told)
		case <-quit:
			hs.ObserveLost(history.ObservedUnfollowed, client, g.Token)
		case <-stop:
		}
	})
	return told
}

// WaitToldOn waits until told — FollowLost's for client's newest grant g —
// closes, for at most history.LostGrace: the lock tells its holder that
// its lease is gone (run it once the server has ended the lease:
// wait-lease-gone). A lock whose grants carry no Lost cannot tell, and
// says so at once.
func WaitToldOn(ctx context.Context, client string, g lock.Grant, told <-chan struct{}) (Outcome, error) {
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
