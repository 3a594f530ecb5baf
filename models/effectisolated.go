package models

import (
	"fmt"

	"github.com/locklab/locklab/history"
)

// askedCutOff: client asked for the lock through its member while the
// member was isolated and after the server had ended client's lease, and
// heard its answer (whatever it was, an unknown outcome too) before the
// member rejoined: the ask could only be answered from what the cut-off
// member had on its own.
func askedCutOff(client string) effect {
	return effect{
		name: fmt.Sprintf("%s asked for the lock through its cut-off member after its lease had ended", client),
		missing: func(tl timeline) string {
			member := tl.members[client]
			ws := tl.faultWindows(history.FaultIsolateMember, member)
			if len(ws) == 0 {
				return fmt.Sprintf("no isolate-member fault on %s's member", client)
			}
			for _, w := range ws {
				gone := int64(-1)
				for _, l := range tl.losses {
					if l.Client == client && l.Gone >= w.Start && l.Gone <= w.Until() {
						gone = l.Gone
						break
					}
				}
				if gone < 0 {
					continue
				}
				for _, op := range tl.all {
					if op.Op == history.Acquire && op.Client == client && op.Call > gone && op.Answered > 0 && op.Answered <= w.Until() {
						return ""
					}
				}
			}
			return fmt.Sprintf("%s asked for no lock between the end of its lease and the heal of %s", client, member)
		},
	}
}
