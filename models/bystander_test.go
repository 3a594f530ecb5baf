package models_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// A fault excuses a lapse for the lock's own checks, but a lease its
// client kept renewing, lapsed while only faults that cannot reach that
// client were open, lapsed through the machine: the environment's ERROR,
// so the run is judged again. A fault that can reach the client — its own
// link or member, a partition, one the history says too little about —
// leaves the lapse to the fault, as before.
func TestAFaultElsewhereLeavesALapseToTheMachine(t *testing.T) {
	ops := []op{
		{client: "c2", op: A, call: 0, ret: 10, token: 10, lease: 0xb},
		{client: "c2", op: C, call: 20, ret: 6000, token: 10, value: val(0), accepted: yes},
		{client: "c2", op: R, call: 6010, ret: 6020},
	}
	// Renewed at 3150, last seen alive at 3300 with a TTL of 3000: the
	// lock did its part.
	lapse := []lost{{client: "c2", t: 3500, aliveUntil: 3300, lease: 0xb, ttl: 3000, renewals: []int64{0, 3150}, renewedAt: 3150}}
	connected := []history.Event{
		{Type: history.Observed, What: history.ObservedConnected, Client: "c1", Member: "m1"},
		{Type: history.Observed, What: history.ObservedConnected, Client: "c2", Member: "m2"},
	}
	for _, tc := range []struct {
		name      string
		fault     string
		target    string // the member a leader fault met
		connected []history.Event
		env       models.Result
	}{
		{"another member cut off", "isolate-member m1", "", connected, models.Error},
		{"another client's link cut", "cut-client c1", "", connected, models.Error},
		{"another client paused", "pause-client c1 at before-write", "", connected, models.Error},
		{"its own member cut off", "isolate-member m2", "", connected, models.Pass},
		{"its own link cut", "cut-client c2", "", connected, models.Pass},
		{"a partition reaches every client", "partition m1 | m2 m3", "", connected, models.Pass},
		{"the leader's loss reaches every client", "kill-leader", "m1", connected, models.Pass},
		{"another member killed", "kill-member m1", "", connected, models.Error},
		{"no connection recorded", "isolate-member m1", "", nil, models.Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := append(slices.Clone(tc.connected), build(ops, lapse, []fault{{name: tc.fault, start: 15, end: 5900, target: tc.target}})...)
			r := mustCheck(t, events, time.Second)
			kept := r.Safety[slices.IndexFunc(r.Safety, func(v models.Verdict) bool { return v.Check == "lease-kept" })]
			assert.Equal(t, models.Pass, kept.Result, "the fault excuses the lapse for the lock: %s", kept.Explanation)
			assert.Equal(t, tc.env, r.Environment.Result, r.Environment.Explanation)
			if tc.env == models.Error {
				assert.Contains(t, r.Environment.Explanation, "c2's lease ended 3.49µs into its hold although its client had sent it a keep-alive")
			}
		})
	}
}

// A lease its client renewed, lapsed while the client held nothing and
// asked for nothing, is the machine's too: the client's next step asks on
// a session that ended through no fault of the lock. One it stopped
// renewing is not.
func TestAnIdleClientsRenewedLapseIsTheMachines(t *testing.T) {
	ops := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 10, lease: 0xa},
		{client: "c1", op: R, call: 20, ret: 30},
		{client: "c2", op: A, call: 4000, ret: 4010, token: 12, lease: 0xb},
		{client: "c2", op: R, call: 4020, ret: 4030},
	}
	renewed := []lost{{client: "c1", t: 3500, aliveUntil: 3300, lease: 0xa, ttl: 3000, renewals: []int64{0, 3150}, renewedAt: 3150}}
	r := mustCheck(t, build(ops, renewed, nil), time.Second)
	assert.Equal(t, models.Error, r.Environment.Result, r.Environment.Explanation)
	assert.Contains(t, r.Environment.Explanation, "c1's lease ended while c1 held nothing and asked for nothing")

	stopped := []lost{{client: "c1", t: 3500, aliveUntil: 3300, lease: 0xa, ttl: 3000, renewals: []int64{0, 100}, renewedAt: 100}}
	r = mustCheck(t, build(ops, stopped, nil), time.Second)
	assert.Equal(t, models.Pass, r.Environment.Result, r.Environment.Explanation)
}

// A waiter gave up at its deadline, and its lease lapsed while the lab's
// own process stood still: the key a gave-up waiter leaves behind (the
// bug gave-up looks for) went with the lease, and c3 was granted as if
// the lock had left nothing. No check catches anything, yet the run is no
// PASS: the machine, not the lock, freed the lock for c3 — ERROR, judged
// again. Without the stall the lapse is the lock's to explain (it stopped
// renewing), and the PASS stands.
func TestALapseThatMayHideTheBugIsNoPass(t *testing.T) {
	ops := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 10, lease: 0xa},
		{client: "c2", op: A, call: 20, ret: 2020, typ: history.Fail},
		{client: "c3", op: A, call: 2100, ret: 3600, token: 14, lease: 0xc},
		{client: "c1", op: C, call: 2200, ret: 2210, token: 10, value: val(0), accepted: yes},
		{client: "c1", op: R, call: 2300, ret: 2310},
		{client: "c3", op: C, call: 3610, ret: 3620, token: 14, value: val(1), accepted: yes},
		{client: "c3", op: R, call: 3630, ret: 3640},
	}
	lapse := []lost{{client: "c2", t: 3500, aliveUntil: 3300, lease: 0xb, ttl: 1000, renewals: []int64{1900}, renewedAt: 1900}}
	stalled := func(evs []history.Event) []history.Event {
		at := slices.IndexFunc(evs, func(e history.Event) bool { return e.Time > 3000 })
		return slices.Insert(evs, at, history.Event{Time: 3000, Type: history.Observed, What: history.ObservedStalled, StalledFrom: 2400})
	}
	r := mustCheck(t, stalled(build(ops, lapse, nil)), time.Second)
	assert.Equal(t, models.Error, r.Environment.Result, r.Environment.Explanation)
	assert.Contains(t, r.Environment.Explanation, "c2's lease ended while c2 held nothing and asked for nothing, while the lab's own process stood still")
	j := models.Judge(r, nil, "", models.ExpectPass)
	assert.Equal(t, models.Error, j.Verdict, j.Error)
	assert.False(t, j.Matches)

	r = mustCheck(t, build(ops, lapse, nil), time.Second)
	assert.Equal(t, models.Pass, r.Environment.Result, r.Environment.Explanation)
	assert.Equal(t, models.Pass, models.Judge(r, nil, "", models.ExpectPass).Verdict)
}

// expire-while-waiting's premise is a waiter whose lease ends while it
// waits. A lock that gives its waiter up when its link breaks — an error
// of the link's, before the lease ends — never had a grant to rest on the
// ended lease: the effect did not happen, and the lesson is moot for it.
// One told "session expired" after the lease ended is what the lesson
// asks.
func TestAWaiterGivenUpAtABrokenLinkMakesTheExpiryMoot(t *testing.T) {
	queued := history.Event{Time: 100, Type: history.Observed, What: history.ObservedQueued, Client: "c2"}
	effects := []history.Effect{{Kind: history.EffectQueuedThenExpired, Clients: []string{"c2"}}}
	check := func(typ history.Type, answered int64) models.EffectResult {
		ops := []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 10, lease: 0xa},
			{client: "c2", op: A, call: 20, ret: answered, typ: typ},
		}
		evs := build(ops, []lost{{client: "c2", t: 2000, aliveUntil: 1800, lease: 0xb}}, nil)
		at := slices.IndexFunc(evs, func(e history.Event) bool { return e.Time > 100 })
		return models.CheckEffects(effects, slices.Insert(evs, at, queued))[0]
	}
	gaveUp := check(history.Info, 1500)
	assert.False(t, gaveUp.Happened)
	assert.Contains(t, gaveUp.Moot, "when its link broke")
	told := check(history.Fail, 2100)
	assert.True(t, told.Happened, told.Missing)
	assert.Empty(t, told.Moot)
}
