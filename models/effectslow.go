package models

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/history"
)

// slowHolding: a delay of client's link came while client held the lock
// and lasted, within the hold, at least ttl: a renewal had to cross the
// slow link for the lease to live.
func slowHolding(client string, ttl time.Duration) effect {
	return effect{
		name: fmt.Sprintf("%s's link was slow for a TTL (%v) or more while it held the lock", client, ttl),
		missing: func(tl timeline) string {
			slow, none := tl.slowLinks(client)
			if none != "" {
				return none
			}
			for _, w := range slow {
				for _, g := range tl.grants(client) {
					end := min(w.Until(), tl.lastEvent)
					for _, r := range tl.releases(client) {
						if r.Call > g.Return {
							end = min(end, r.Call)
							break
						}
					}
					if end-max(w.Start, g.Return) >= int64(ttl) {
						return ""
					}
				}
			}
			return fmt.Sprintf("%s did not hold the lock for a TTL while its link was slow", client)
		},
	}
}

// slowGranted: client asked for the lock while its link was delayed and
// was granted it before the delay ended: the grant came over the slow link.
func slowGranted(client string) effect {
	return effect{
		name: fmt.Sprintf("%s was granted the lock over its slow link", client),
		missing: func(tl timeline) string {
			slow, none := tl.slowLinks(client)
			if none != "" {
				return none
			}
			for _, w := range slow {
				for _, g := range tl.grants(client) {
					if g.Call >= w.Start && g.Return <= w.Until() {
						return ""
					}
				}
			}
			return fmt.Sprintf("no acquire of %s was asked and granted while its link was slow", client)
		},
	}
}

// slowLinks lists the delays of client's link, or says there were none.
func (tl timeline) slowLinks(client string) ([]history.FaultWindow, string) {
	slow := tl.faultWindows(history.FaultDelayClient, client)
	if len(slow) == 0 {
		return nil, fmt.Sprintf("no delay of %s's link", client)
	}
	return slow, ""
}
