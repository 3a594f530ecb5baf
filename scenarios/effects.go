package scenarios

import (
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// An Effect is something a scenario claims happens in every run of it —
// "c1's lease ended while c1 was paused", "a new leader was elected and
// granted the lock" — as data: it is written into every history's header
// and judged there by package models, from the history alone, so that an
// offline check of the file judges it as the run did. A run in which an
// effect did not happen did not exercise what the scenario names (a
// vacuous schedule): it cannot PASS.
type Effect = history.Effect

// EffectResult is one effect's outcome in one run (see models).
type EffectResult = models.EffectResult

// CheckEffects judges each of the scenario's effects on one history.
func (s Scenario) CheckEffects(events []history.Event) []EffectResult {
	return models.CheckEffects(s.Effects, events)
}

// The catalog's effects, built as data.

func leaseEndedDuring(client string, kind faults.Kind, what string) Effect {
	return Effect{Kind: history.EffectLeaseEndedDuring, Clients: []string{client}, Fault: history.FaultKind(kind), What: what}
}

// leaseEndedOn: client's lease ended inside a window of a fault of kind
// on member.
func leaseEndedOn(client string, kind faults.Kind, member, what string) Effect {
	return Effect{Kind: history.EffectLeaseEndedDuring, Clients: []string{client, member}, Fault: history.FaultKind(kind), What: what}
}

func grantedDuring(client string, kind faults.Kind, other, what string) Effect {
	return Effect{Kind: history.EffectGrantedDuring, Clients: []string{client, other}, Fault: history.FaultKind(kind), What: what}
}

func queuedThenExpired(client string) Effect {
	return Effect{Kind: history.EffectQueuedThenExpired, Clients: []string{client}}
}

func releasedWhileWaiting(holder, waiter string) Effect {
	return Effect{Kind: history.EffectReleasedWhileWaiting, Clients: []string{holder, waiter}}
}

func releaseTookEffectUnanswered(client string) Effect {
	return Effect{Kind: history.EffectReleaseUnanswered, Clients: []string{client}}
}

func acquireTookEffectUnanswered(client string) Effect {
	return Effect{Kind: history.EffectAcquireUnanswered, Clients: []string{client}}
}

func blippedHolding(client string, ttl time.Duration, fault faults.Kind) Effect {
	return Effect{Kind: history.EffectBlippedHolding, Clients: []string{client}, TTL: int64(ttl),
		Fault: history.FaultKind(fault)}
}

func blippedWaiting(client string, ttl time.Duration) Effect {
	return Effect{Kind: history.EffectBlippedWaiting, Clients: []string{client}, TTL: int64(ttl)}
}

func slowHolding(client string, ttl time.Duration) Effect {
	return Effect{Kind: history.EffectSlowHolding, Clients: []string{client}, TTL: int64(ttl)}
}

func slowGranted(client string) Effect {
	return Effect{Kind: history.EffectSlowGranted, Clients: []string{client}}
}

func regrantedBeforeRetry(client, waiter string) Effect {
	return Effect{Kind: history.EffectRegrantedBeforeRetry, Clients: []string{client, waiter}}
}

func lateReleaseWhileHeld(late, holder, waiter string) Effect {
	return Effect{Kind: history.EffectLateReleaseWhileHeld, Clients: []string{late, holder, waiter}}
}

func cutOffLeasesEnded(kind faults.Kind, what string) Effect {
	return Effect{Kind: history.EffectCutOffLeasesEnded, Fault: history.FaultKind(kind), What: what}
}

func othersGranted(kind faults.Kind, what string, newLeader bool) Effect {
	return Effect{Kind: history.EffectOthersGranted, Fault: history.FaultKind(kind), What: what, NewLeader: newLeader}
}

func askedCutOff(client string) Effect {
	return Effect{Kind: history.EffectAskedCutOff, Clients: []string{client}}
}

func rejoined(kind faults.Kind) Effect {
	return Effect{Kind: history.EffectRejoined, Fault: history.FaultKind(kind)}
}

func requestLost(client string) Effect {
	return Effect{Kind: history.EffectRequestLost, Clients: []string{client}}
}

func contended() Effect { return Effect{Kind: history.EffectContended} }

func heldPastTTL(ttl time.Duration) Effect {
	return Effect{Kind: history.EffectHeldPastTTL, TTL: int64(ttl)}
}

func allFaultsApplied() Effect { return Effect{Kind: history.EffectAllFaultsApplied} }

func crashedHolding(client string) Effect {
	return Effect{Kind: history.EffectCrashedHolding, Clients: []string{client}}
}

func waitedOutLease(waiter, crashed string) Effect {
	return Effect{Kind: history.EffectWaitedOutLease, Clients: []string{waiter, crashed}}
}

func crashedPaused(client, what string) Effect {
	return Effect{Kind: history.EffectCrashedPaused, Clients: []string{client}, What: what}
}

func gaveUp(waiter, holder string) Effect {
	return Effect{Kind: history.EffectGaveUp, Clients: []string{waiter, holder}}
}

// EffectCount says in how many runs of a scenario × lock one effect
// happened. A run counts once, however many resources it judged: the
// effect happened if it is in every one of its histories.
type EffectCount struct {
	Scenario string `json:"scenario"`
	Lock     string `json:"lock"`
	Effect   string `json:"effect"`
	Happened int    `json:"happened"`
	Runs     int    `json:"runs"`
}

// EffectCounts tallies the effects of every run in s, in the order the
// results first name them.
func (s Summary) EffectCounts() []EffectCount {
	type runKey struct {
		scenario, lock string
		seed           uint64
		effect         string
	}
	type countKey struct{ scenario, lock, effect string }
	happened := map[runKey]bool{}
	var runs []runKey
	for _, r := range s.Results {
		if r.Skipped != "" {
			continue // nothing ran: nothing could happen
		}
		for _, ef := range r.Effects {
			k := runKey{r.Scenario, r.Lock, r.Seed, ef.Name}
			was, seen := happened[k]
			if !seen {
				runs = append(runs, k)
				was = true
			}
			happened[k] = was && ef.Happened
		}
	}
	var out []EffectCount
	index := map[countKey]int{}
	for _, k := range runs {
		ck := countKey{k.scenario, k.lock, k.effect}
		i, ok := index[ck]
		if !ok {
			i = len(out)
			index[ck] = i
			out = append(out, EffectCount{Scenario: k.scenario, Lock: k.lock, Effect: k.effect})
		}
		out[i].Runs++
		if happened[k] {
			out[i].Happened++
		}
	}
	return out
}
