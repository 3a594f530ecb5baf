package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// hist builds a small history; times are whatever the test writes.
type hist struct {
	events []history.Event
	id     int
}

func (h *hist) add(e history.Event) *hist { h.events = append(h.events, e); return h }

func (h *hist) connect(t int64, client, member string) *hist {
	return h.add(history.Event{Time: t, Type: history.Observed, What: history.ObservedConnected, Client: client, Member: member})
}

func (h *hist) observe(t int64, what, client, member string) *hist {
	return h.add(history.Event{Time: t, Type: history.Observed, What: what, Client: client, Member: member})
}

// op adds an operation of client from call to ret with the given outcome;
// ret < 0 leaves it open.
func (h *hist) op(client string, op history.Op, call, ret int64, typ history.Type) *hist {
	h.id++
	h.add(history.Event{Time: call, Type: history.Invoke, ID: h.id, Client: client, Op: op})
	if ret >= 0 {
		h.add(history.Event{Time: ret, Type: typ, ID: h.id, Client: client, Op: op, Token: int64(h.id)})
	}
	return h
}

func (h *hist) grant(client string, call, ret int64) *hist {
	return h.op(client, history.Acquire, call, ret, history.Ok)
}

func (h *hist) release(client string, call, ret int64) *hist {
	return h.op(client, history.Release, call, ret, history.Ok)
}

func (h *hist) fault(id int, start, end int64, fault, target, err string) *hist {
	h.add(history.Event{Time: start, Type: history.FaultStart, ID: id, Fault: fault})
	return h.add(history.Event{Time: end, Type: history.FaultEnd, ID: id, Fault: fault, Target: target, Error: err})
}

func (h *hist) lost(t int64, client string) *hist {
	return h.add(history.Event{Time: t, Type: history.LeaseLost, Client: client, Lease: 7, AliveUntil: t - 1})
}

// sorted returns the events in time order, as a recorder writes them.
func (h *hist) sorted() []history.Event {
	out := append([]history.Event(nil), h.events...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Time < out[j-1].Time; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Every effect is shown both ways: a history where it happened, and one
// where it did not (the run would be vacuous).
func TestEffectsBothWays(t *testing.T) {
	pausedLapse := func(lossAt int64) []history.Event {
		return new(hist).connect(0, "c1", "m1").connect(0, "c2", "m2").
			grant("c1", 1, 2).
			fault(1, 10, 100, "pause-client c1 at before-write", "before-write", "").
			lost(lossAt, "c1").
			grant("c2", 60, 70).sorted()
	}
	partition := func(lossAt, rejoinAt int64) []history.Event {
		h := new(hist).connect(0, "c1", "m1").connect(0, "c2", "m2").connect(0, "c3", "m3").
			grant("c1", 1, 2).release("c1", 3, 4).
			fault(1, 10, 100, "isolate-member m1", "m1", "").
			observe(11, history.ObservedLeader, "", "m2").
			grant("c2", 20, 30)
		if lossAt > 0 {
			h.lost(lossAt, "c1")
		}
		return h.grant("c1", 50, rejoinAt).sorted()
	}
	waiting := func(queued bool, lossAt int64) []history.Event {
		h := new(hist).connect(0, "c1", "m1").connect(0, "c2", "m2").grant("c1", 1, 2).
			op("c2", history.Acquire, 3, 40, history.Fail)
		if queued {
			h.observe(5, history.ObservedQueued, "c2", "")
		}
		return h.lost(lossAt, "c2").release("c1", 20, 21).sorted()
	}
	lostAcquire := func(typ history.Type, seen bool) []history.Event {
		h := new(hist).connect(0, "c1", "m1").fault(1, 1, 9, "lose-answer c1", "", "").op("c1", history.Acquire, 2, 8, typ)
		if seen {
			h.observe(5, history.ObservedAcquireWritten, "c1", "")
		}
		return h.sorted()
	}
	blipHeld := func(releaseAt int64, cutFor int64) []history.Event {
		return new(hist).grant("c1", 1, 2).fault(1, 10, 10+cutFor, "cut-client c1", "", "").
			release("c1", releaseAt, releaseAt+1).sorted()
	}
	answersHeld := func(releaseAt int64, heldFor int64) []history.Event {
		return new(hist).grant("c1", 1, 2).fault(1, 10, 10+heldFor, "hold-answers c1", "", "").
			release("c1", releaseAt, releaseAt+1).sorted()
	}
	blipWaited := func(answeredAt int64) []history.Event {
		return new(hist).grant("c2", 1, 2).op("c1", history.Acquire, 5, answeredAt, history.Ok).
			fault(1, 10, 50, "cut-client c1", "", "").sorted()
	}
	slowHeld := func(releaseAt int64) []history.Event {
		return new(hist).grant("c1", 1, 2).fault(1, 10, 500, "delay-client c1 40ns", "", "").
			release("c1", releaseAt, releaseAt+1).sorted()
	}
	slowAsked := func(askedAt int64) []history.Event {
		return new(hist).fault(1, 10, 500, "delay-client c1 40ns", "", "").
			op("c1", history.Acquire, askedAt, askedAt+50, history.Ok).sorted()
	}
	cases := []struct {
		name   string
		effect Effect
		yes    []history.Event
		no     []history.Event
		why    string
	}{
		{"lease ended during pause", leaseEndedDuring("c1", "pause-client", "c1 was paused"),
			pausedLapse(50), pausedLapse(150), "no lease of c1 ended between"},
		{"granted during pause", grantedDuring("c2", "pause-client", "c1", "c1 was paused"),
			pausedLapse(50), new(hist).grant("c2", 1, 2).fault(1, 10, 20, "pause-client c1 at before-write", "", "").sorted(),
			"no grant to c2 between"},
		{"queued then expired", queuedThenExpired("c2"), waiting(true, 10), waiting(false, 10), "c2 was never seen queued"},
		{"released while waiting", releasedWhileWaiting("c1", "c2"), waiting(true, 10), waiting(false, 10), "never seen queued"},
		{"cut-off leases ended", cutOffLeasesEnded("isolate-member", "isolated"), partition(60, 110), partition(0, 110),
			"c1 (on m1) kept its lease"},
		{"others granted", othersGranted("isolate-member", "isolated", false), partition(60, 110),
			new(hist).connect(0, "c1", "m1").fault(1, 10, 100, "isolate-member m1", "m1", "").grant("c1", 20, 30).sorted(),
			"no client of another member than m1 was granted"},
		{"new leader granted", othersGranted("isolate-member", "isolated", true), partition(60, 110),
			new(hist).connect(0, "c2", "m2").fault(1, 10, 100, "isolate-member m1", "m1", "").grant("c2", 20, 30).sorted(),
			"no leader other than m1 was seen"},
		{"asked while cut off", askedCutOff("c1"), partition(40, 90), partition(60, 90),
			"c1 asked for no lock between the end of its lease and the heal of m1"},
		{"rejoined", rejoined("isolate-member"), partition(60, 110), partition(60, 90), "c1 (on m1) was not granted after"},
		{"contended", contended(),
			new(hist).grant("c1", 0, 1).op("c2", history.Acquire, 0, 5, history.Ok).release("c1", 2, 3).sorted(),
			new(hist).grant("c1", 0, 1).release("c1", 2, 3).grant("c2", 4, 5).sorted(), "0 of 2 grants were contested"},
		{"held past the TTL", heldPastTTL(10),
			new(hist).grant("c1", 1, 2).op("c2", history.Acquire, 3, 30, history.Ok).release("c1", 20, 21).sorted(),
			new(hist).grant("c1", 1, 2).release("c1", 20, 21).grant("c2", 25, 26).sorted(), "no hold past 10ns had a waiter"},
		{"acquire unanswered", acquireTookEffectUnanswered("c1"), lostAcquire(history.Info, true),
			lostAcquire(history.Info, false), "the server was never seen to take c1's acquire unanswered"},
		{"acquire unanswered, yet granted", acquireTookEffectUnanswered("c1"), lostAcquire(history.Fail, true),
			lostAcquire(history.Ok, true), "was granted all the same"},
		{"blipped holding", blippedHolding("c1", 100, faults.CutClient), blipHeld(200, 40), blipHeld(120, 40), "did not hold the lock from before"},
		{"blipped holding, a cut too long", blippedHolding("c1", 100, faults.CutClient), blipHeld(300, 40), blipHeld(300, 150), "no cut of c1's link shorter than 100ns"},
		{"answers held while holding", blippedHolding("c1", 100, faults.HoldAnswers), answersHeld(200, 40), answersHeld(120, 40),
			"did not hold the lock from before a short hold of the answers"},
		{"answers held, not a cut", blippedHolding("c1", 100, faults.HoldAnswers), answersHeld(200, 40), blipHeld(200, 40),
			"no hold of the answers of c1's link shorter than 100ns"},
		{"blipped waiting", blippedWaiting("c1", 100), blipWaited(80), blipWaited(30), "no acquire of c1 waited across"},
		{"slow while holding", slowHolding("c1", 100), slowHeld(200), slowHeld(80), "did not hold the lock for a TTL while its link was slow"},
		{"granted over a slow link", slowGranted("c1"), slowAsked(20), slowAsked(5), "no acquire of c1 was asked and granted"},
		{"all faults applied", allFaultsApplied(),
			new(hist).fault(1, 1, 2, "cut-client c1", "", "").sorted(),
			new(hist).fault(1, 1, 2, "pause-client c3 at before-write", "", "c3 never reached before-write").sorted(),
			"never reached"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := Scenario{Effects: []Effect{tc.effect}}
			assert.NoError(t, history.Validate(tc.yes))
			assert.NoError(t, history.Validate(tc.no))
			yes := s.CheckEffects(tc.yes)
			assert.True(t, yes[0].Happened, "should happen: %s", yes[0].Missing)
			assert.Empty(t, models.Vacuous(yes))
			no := s.CheckEffects(tc.no)
			assert.False(t, no[0].Happened)
			assert.Contains(t, no[0].Missing, tc.why)
			assert.Contains(t, models.Vacuous(no), "vacuous schedule")
		})
	}
}

// Every catalog scenario declares what its lesson claims happens.
func TestEveryScenarioDeclaresEffects(t *testing.T) {
	for _, s := range catalog {
		assert.NotEmpty(t, s.Effects, s.Name)
	}
}

// A run counts once per scenario × lock × seed, whatever its resources;
// an effect missing from one resource's history is missing from the run.
func TestEffectCounts(t *testing.T) {
	yes := []EffectResult{{Name: "e", Happened: true}}
	no := []EffectResult{{Name: "e", Missing: "x"}}
	sum := Summary{Results: []Result{
		{Scenario: "s", Lock: "l", Seed: 1, Resource: "fenced", Effects: yes},
		{Scenario: "s", Lock: "l", Seed: 1, Resource: "unfenced", Effects: yes},
		{Scenario: "s", Lock: "l", Seed: 2, Resource: "fenced", Effects: yes},
		{Scenario: "s", Lock: "l", Seed: 2, Resource: "unfenced", Effects: no},
	}}
	assert.Equal(t, []EffectCount{{Scenario: "s", Lock: "l", Effect: "e", Happened: 1, Runs: 2}}, sum.EffectCounts())
}

// The retried release is moot for a lock that takes a new lease for every
// grant — skipped, not ERROR and not PASS — and only for such a lock: two
// grants on one lease that miss the lesson for another reason are vacuous.
func TestRetriedReleaseMootOnlyForALeasePerGrant(t *testing.T) {
	grants := func(l1, l2 int64) []history.Event {
		h := new(hist).connect(0, "c1", "m1").connect(0, "c2", "m2")
		h.add(history.Event{Time: 1, Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire})
		h.add(history.Event{Time: 2, Type: history.Ok, ID: 1, Client: "c1", Op: history.Acquire, Token: 1, Lease: l1})
		h.add(history.Event{Time: 5, Type: history.Invoke, ID: 2, Client: "c1", Op: history.Acquire})
		h.add(history.Event{Time: 6, Type: history.Ok, ID: 2, Client: "c1", Op: history.Acquire, Token: 2, Lease: l2})
		return h.sorted()
	}
	s := Scenario{Effects: []Effect{regrantedBeforeRetry("c1", "c2")}}
	perGrant := s.CheckEffects(grants(7, 8))
	assert.False(t, perGrant[0].Happened)
	assert.Contains(t, models.Moot(perGrant), "does not apply to this lock: it took a new lease")

	sameLease := s.CheckEffects(grants(7, 7)) // c2 never queued: vacuous
	assert.False(t, sameLease[0].Happened)
	assert.Empty(t, models.Moot(sameLease))
	assert.Contains(t, models.Vacuous(sameLease), "vacuous schedule")
}

// The lost acquire is moot for a lock whose client rode out the lost answer
// and was granted all the same — skipped, not ERROR — and only then: a key
// never seen written is vacuous.
func TestLostAcquireMootOnlyWhenGrantedAllTheSame(t *testing.T) {
	lost := func(typ history.Type, seen bool) []history.Event {
		h := new(hist).connect(0, "c1", "m1").fault(1, 1, 9, "lose-answer c1", "", "").op("c1", history.Acquire, 2, 8, typ)
		if seen {
			h.observe(5, history.ObservedAcquireWritten, "c1", "")
		}
		return h.sorted()
	}
	s := Scenario{Effects: []Effect{acquireTookEffectUnanswered("c1")}}
	granted := s.CheckEffects(lost(history.Ok, true))
	assert.False(t, granted[0].Happened)
	assert.Contains(t, models.Moot(granted), "does not apply to this lock: c1's acquire whose answer the link lost was granted all the same")

	unseen := s.CheckEffects(lost(history.Info, false))
	assert.Empty(t, models.Moot(unseen))
	assert.Contains(t, models.Vacuous(unseen), "vacuous schedule")
}

// A member cut off while its only client held no lease — a lock that takes
// a lease for each try, between tries — is a lesson that lock cannot learn
// then (skipped, with why); a client whose lease was alive and kept is a
// vacuous run, as before.
func TestCutOffLeasesMootOnlyWithoutALease(t *testing.T) {
	partition := func(lostAt int64) []history.Event {
		return new(hist).connect(0, "c1", "m1").connect(0, "c2", "m2").
			lost(lostAt, "c1").
			fault(1, 10, 100, "isolate-member m1", "m1", "").
			grant("c2", 20, 30).sorted()
	}
	s := Scenario{Effects: []Effect{cutOffLeasesEnded("isolate-member", "isolated")}}
	between := s.CheckEffects(partition(5)) // its last lease ended before the cut
	assert.False(t, between[0].Happened)
	assert.Contains(t, models.Moot(between), "no client of m1 (c1) held a lease when it was isolated")

	kept := s.CheckEffects(partition(150)) // alive across the cut, ended after
	assert.False(t, kept[0].Happened)
	assert.Empty(t, models.Moot(kept))
	assert.Contains(t, models.Vacuous(kept), "c1 (on m1) kept its lease")
}
