package models

import (
	"fmt"

	"github.com/locklab/locklab/history"
)

// gaveUp: waiter asked while holder held the lock, with a deadline, was
// seen waiting, and its acquire ended without a grant while holder still
// held it: the lock gave up on waiter's behalf (or the lab stopped waiting
// for it, its deadline long past) with the lock taken.
func gaveUp(waiter, holder string) effect {
	return effect{
		name: fmt.Sprintf("%s's acquire gave up at its deadline while %s held the lock", waiter, holder),
		missing: func(tl timeline) string {
			for _, op := range tl.all {
				if op.Client != waiter || op.Op != history.Acquire || op.Deadline == 0 || op.Type == history.Ok ||
					op.Answered == 0 {
					continue
				}
				for _, g := range tl.grants(holder) {
					if g.Return > op.Call || heldUntil(tl, g) < op.Answered {
						continue
					}
					// What the lock leaves behind when it gives up is only
					// put to it if it was waiting — its key written, its
					// polls answered — before then: an acquire a slow
					// machine kept from the server until its deadline left
					// nothing, and proves nothing.
					if queued, ok := tl.queuedAt(waiter); !ok || queued < op.Call || queued > op.Answered {
						return fmt.Sprintf("%s's acquire gave up at %s without having been seen waiting", waiter, at(op.Answered))
					}
					return ""
				}
			}
			return fmt.Sprintf("no acquire of %s with a deadline ended without a grant while %s held the lock", waiter, holder)
		},
	}
}

// heldUntil is when g's holder began to release it (its first release
// called after the grant), or the history's end.
func heldUntil(tl timeline, g history.Operation) int64 {
	for _, r := range tl.releases(g.Client) {
		if r.Call >= g.Return {
			return r.Call
		}
	}
	return tl.lastEvent
}
