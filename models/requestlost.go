package models

import (
	"fmt"

	"github.com/locklab/locklab/history"
)

// requestLost: client's acquire made its write, and the request it sent
// next was lost with its connection while that acquire was under way (an
// acquire next=lost): the lock had to do something about a write it made
// and a connection broken under its next request.
func requestLost(client string) effect {
	return effect{
		name: fmt.Sprintf("%s's acquire made its write and lost the request after it with its connection", client),
		missing: func(tl timeline) string {
			for _, o := range tl.observed {
				if o.What != history.ObservedRequestLost || o.Client != client {
					continue
				}
				for _, op := range tl.all {
					if op.Op == history.Acquire && op.Client == client && op.Call <= o.Time && op.Return >= o.Time {
						return ""
					}
				}
				return fmt.Sprintf("no acquire of %s was under way when its request was lost at %s", client, at(o.Time))
			}
			return fmt.Sprintf("no request of %s's was lost after its acquire's write: the acquire made no write, "+
				"or asked nothing after it", client)
		},
	}
}
