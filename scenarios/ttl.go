package scenarios

import (
	"cmp"
	"slices"
	"time"

	"github.com/locklab/locklab/run"
)

// Scaled is s with leases k times as long as written (k ≤ 1: s as it is):
// a scenario written for 1 s leases gets k seconds, retried-release's 3 s
// get 3k. What is measured against the TTL scales with it — its operations'
// timeouts, the bound on granting again after a fault (Minimum), and the
// TTL its effects compare with (held-past-ttl) — so a run on a slow machine
// can take leases that the machine renews in time (see Config.LeaseScale).
func (s Scenario) Scaled(k int) Scenario {
	if k <= 1 {
		return s
	}
	s.TTL *= k
	s.scale = k
	s.opTimeout = cmp.Or(s.opTimeout, run.DefaultOpTimeout) * time.Duration(k)
	if s.Minimum.RegrantWithin > 0 {
		s.Minimum.RegrantWithin = int64(run.RegrantWithin(s.TTL))
	}
	s.Effects = slices.Clone(s.Effects)
	for i := range s.Effects {
		s.Effects[i].TTL *= int64(k)
	}
	return s
}
