package models

import (
	"fmt"

	"github.com/locklab/locklab/history"
)

// The effects of the lessons about a waiter: its lease ended while it
// waited (expire-while-waiting), and the lock was released to it.

// queuedThenExpired: client was seen queued, then its lease ended while its
// acquire still waited.
func queuedThenExpired(client string) effect {
	return effect{
		name: fmt.Sprintf("%s was queued, then its lease ended while it waited", client),
		missing: func(tl timeline) string {
			queued, ok := tl.queuedAt(client)
			if !ok {
				return fmt.Sprintf("%s was never seen queued", client)
			}
			gone, ok := tl.lostAfter(client, queued)
			if !ok {
				return fmt.Sprintf("no lease of %s ended after it was queued at %s", client, at(queued))
			}
			if op := tl.gaveUpBefore(client, queued, gone); op != nil {
				return fmt.Sprintf("%s's acquire had ended at %s, before its lease did at %s", client, at(op.Answered), at(gone))
			}
			return ""
		},
		// A lock that gives its waiter up when its link breaks — it
		// answers the acquire with an error of the link's before the lease
		// ends — left nothing for a grant to rest on: the lesson is not its
		// to learn.
		moot: func(tl timeline) string {
			queued, _ := tl.queuedAt(client)
			gone, ok := tl.lostAfter(client, queued)
			if op := tl.gaveUpBefore(client, queued, gone); ok && op != nil {
				return fmt.Sprintf("%s's acquire gave up at %s, when its link broke (%s), before its lease ended at %s: "+
					"nothing could be granted on the ended lease", client, at(op.Answered), op.Error, at(gone))
			}
			return ""
		},
	}
}

// lostAfter is when client's first lease to end after from was seen gone.
func (tl timeline) lostAfter(client string, from int64) (int64, bool) {
	for _, l := range tl.losses {
		if l.Client == client && l.Gone >= from {
			return l.Gone, true
		}
	}
	return 0, false
}

// gaveUpBefore is client's acquire under way at queued that was answered
// with an error of no definite outcome (a broken link's, not "session
// expired") before gone; nil if none was.
func (tl timeline) gaveUpBefore(client string, queued, gone int64) *history.Operation {
	for i, op := range tl.all {
		if op.Op == history.Acquire && op.Client == client && op.Call <= queued && op.Type == history.Info &&
			op.Answered != 0 && op.Answered < gone {
			return &tl.all[i]
		}
	}
	return nil
}

// releasedWhileWaiting: holder released the lock after waiter was seen
// queued, and waiter's acquire had not given up at its deadline before
// that: the hand-over the lesson is about was put to the lock. A waiter
// whose deadline passed first (a machine too slow for the lesson's steps)
// was never handed anything: the run is vacuous, never a PASS — a lock
// that would have been granted on its ended lease was not asked to.
func releasedWhileWaiting(holder, waiter string) effect {
	return effect{
		name: fmt.Sprintf("%s released the lock while %s waited", holder, waiter),
		missing: func(tl timeline) string {
			queued, ok := tl.queuedAt(waiter)
			if !ok {
				return fmt.Sprintf("%s was never seen queued", waiter)
			}
			for _, op := range tl.releases(holder) {
				if op.Type != history.Ok || op.Call < queued {
					continue
				}
				if a := tl.timedOutBefore(waiter, queued, op.Call); a != nil {
					return fmt.Sprintf("%s's acquire reached its deadline at %s and ended, before %s released at %s",
						waiter, at(a.Deadline), holder, at(op.Call))
				}
				return ""
			}
			return fmt.Sprintf("%s never released after %s was queued", holder, waiter)
		},
	}
}

// timedOutBefore is client's acquire under way at queued that ended at or
// after its context's deadline, and before t; nil if none did.
func (tl timeline) timedOutBefore(client string, queued, t int64) *history.Operation {
	for i, op := range tl.all {
		if op.Op != history.Acquire || op.Client != client || op.Call > queued || op.Deadline == 0 {
			continue
		}
		end := op.Return
		if op.Answered != 0 {
			end = op.Answered
		}
		if end >= op.Deadline && end < t {
			return &tl.all[i]
		}
	}
	return nil
}
