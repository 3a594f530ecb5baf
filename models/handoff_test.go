package models_test

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// The hand-off check: a waiter that is never granted although the
// lock was free for the bound — nobody held it, nobody else was granted,
// no fault reached it — is the lock's failure (a waiter that misses its
// wake-up, or waits behind a key its lock left); a waiter behind a holder,
// behind a key an unanswered acquire may have left, cut off itself, or
// whose own lease ended, is not.
func TestHandOffCatchesAWaiterLeftWaitingForAFreeLock(t *testing.T) {
	h := history.Header{Minimum: &history.Minimum{Grants: 1, HandOffWithin: 1000}}
	check := handOffChecker(t, h)
	c1 := op{client: "c1", op: A, call: 0, ret: 10, token: 4, lease: 0xa}
	released := op{client: "c1", op: R, call: 100, ret: 110}
	waited := op{client: "c2", op: A, call: 50, ret: 2000, typ: history.Info}

	stranded := check([]op{c1, waited, released}, nil, nil)
	assert.Equal(t, models.Fail, stranded.Result)
	assert.Contains(t, stranded.Explanation, "c2 waited 1.89µs for the lock while it was free — after c1's grant (token 4) ended")
	assert.Len(t, stranded.Evidence, 2, "the waiter and the grant whose end freed the lock")

	granted := check([]op{c1, {client: "c2", op: A, call: 50, ret: 130, token: 6}, released}, nil, nil)
	assert.NotEqual(t, models.Fail, granted.Result, granted.Explanation)

	// Behind a holder that never released, a waiter waits rightly; once
	// the holder's lease ends on the server (a crashed holder's key goes
	// then), the lock is free.
	assert.NotEqual(t, models.Fail, check([]op{c1, waited}, nil, nil).Result)
	crashed := check([]op{c1, waited}, []lost{{client: "c1", t: 500, aliveUntil: 490, lease: 0xa}}, nil)
	assert.Equal(t, models.Fail, crashed.Result, crashed.Explanation)

	// Before the run's first grant the store has not shown it grants at
	// all (a just-started server's first requests are slow): a wait then
	// is not counted; from the first grant on, it is — and in a run that
	// never grants, all of it is.
	cold := op{client: "c2", op: A, call: 0, ret: 2500, typ: history.Info}
	late := op{client: "c1", op: A, call: 0, ret: 2100, token: 4, lease: 0xa}
	freed := op{client: "c1", op: R, call: 2200, ret: 2210}
	assert.NotEqual(t, models.Fail, check([]op{cold, late, freed}, nil, nil).Result, "counted from 2.1µs: 0.4µs")
	assert.Equal(t, models.Fail, check([]op{cold}, nil, nil).Result, "a lock that never grants strands every waiter")

	// Too short a wait, or another client granted meanwhile: no finding.
	short := op{client: "c2", op: A, call: 50, ret: 900, typ: history.Info}
	assert.NotEqual(t, models.Fail, check([]op{c1, short, released}, nil, nil).Result)
	other := op{client: "c3", op: A, call: 60, ret: 200, token: 7}
	assert.NotEqual(t, models.Fail, check([]op{c1, waited, other, released}, nil, nil).Result)

	// A fault that reaches the waiter excuses it, and a bound's time to
	// settle after; another client's does not.
	cutWaiter := []fault{{name: "cut-client c2", start: 200, end: 1500}}
	assert.NotEqual(t, models.Fail, check([]op{c1, waited, released}, nil, cutWaiter).Result)
	cutOther := []fault{{name: "cut-client c3", start: 200, end: 1500}}
	assert.Equal(t, models.Fail, check([]op{c1, waited, released}, nil, cutOther).Result)

	// An acquire of c3 whose answer a fault took may have left a key
	// that keeps the lock: the waiter is not left waiting for nothing
	// until c3's lease ends. One that simply timed out left nothing (the
	// contract says so).
	unheard := op{client: "c3", op: A, call: 20, ret: 60, typ: history.Info}
	loseAnswer := []fault{{name: "lose-answer c3", start: 20, end: 60}}
	assert.NotEqual(t, models.Fail, check([]op{c1, unheard, waited, released}, nil, loseAnswer).Result)
	assert.Equal(t, models.Fail, check([]op{c1, unheard, waited, released}, nil, nil).Result)

	// The waiter's own lease ended while it waited: no grant could come.
	ownLease := []lost{{client: "c2", t: 1200, aliveUntil: 1100, lease: 0xb}}
	assert.NotEqual(t, models.Fail, check([]op{c1, waited, released}, ownLease, nil).Result)

	// The lab's own process standing still hands a lock over late
	// whatever the lock does: that time is not counted. CPUs merely
	// oversubscribed (a runner beside other work) excuse nothing: a
	// waiter that misses its wake-up stays caught there.
	busy := func(what string) []history.Event {
		evs := append(build([]op{c1, waited, released}, nil, nil),
			history.Event{Time: 1900, Type: history.Observed, What: what, StalledFrom: 150})
		slices.SortStableFunc(evs, func(a, b history.Event) int { return cmp.Compare(a.Time, b.Time) })
		return evs
	}
	r, err := models.Check(h, busy(history.ObservedStalled), time.Second)
	require.NoError(t, err)
	assert.Equal(t, models.Unknown, r.HandOff.Result, "not decided, never a pass: %s", r.HandOff.Explanation)
	assert.Contains(t, r.HandOff.Explanation, "the lab's own process stood still")
	assert.Equal(t, models.Error, r.Environment.Result, "the environment's doing, run again: %s", r.Environment.Explanation)
	assert.Contains(t, r.Environment.Explanation, "c2 waited")
	r, err = models.Check(h, busy(history.ObservedStarved), time.Second)
	require.NoError(t, err)
	assert.Equal(t, models.Fail, r.HandOff.Result, r.HandOff.Explanation)

	h.Minimum.HandOffWithin = 0
	assert.Equal(t, models.NotApplicable, check([]op{c1, waited, released}, nil, nil).Result, "no bound stated")
}

// A slow link delivers: a waiter on one is held to hand-off, given a few
// of its delays more, even while the link stays slow to the end of the
// run; and a lease the waiter had let go before it asked (an earlier
// try's, ending on schedule) does not excuse its wait.
func TestHandOffHoldsAWaiterOnASlowLink(t *testing.T) {
	check := handOffChecker(t, history.Header{Minimum: &history.Minimum{Grants: 1, HandOffWithin: 1000}})
	c1 := op{client: "c1", op: A, call: 0, ret: 10, token: 4, lease: 0xa}
	released := op{client: "c1", op: R, call: 100, ret: 110}
	slow := []fault{{name: "delay-client c2 100ns", start: 5, end: 3000}} // to the end of the run
	wedged := op{client: "c2", op: A, call: 50, ret: 2000, typ: history.Info}
	v := check([]op{c1, wedged, released}, nil, slow)
	assert.Equal(t, models.Fail, v.Result, "1.89µs on a free lock, more than 1µs and 4 delays of 100ns: %s", v.Explanation)
	assert.Contains(t, v.Explanation, "its link was slow, every message 100ns late each way, and delivered")
	assert.Contains(t, v.Explanation, "within 1.4µs")

	late := op{client: "c2", op: A, call: 50, ret: 1400, token: 6}
	assert.NotEqual(t, models.Fail, check([]op{c1, late, released}, nil, slow).Result, "granted within the bound and the link's delays")
	unanswered := op{client: "c2", op: A, call: 50, ret: 1400, typ: history.Info}
	assert.NotEqual(t, models.Fail, check([]op{c1, unanswered, released}, nil, slow).Result, "1.29µs: within 1.4µs")

	// A cut link is no slow one: it still excuses the wait.
	cut := []fault{{name: "cut-client c2", start: 5, end: 3000}}
	assert.NotEqual(t, models.Fail, check([]op{c1, wedged, released}, nil, cut).Result)

	// A lease the waiter stopped renewing, ending a TTL after its last
	// keep-alive — an earlier try's, or one a failed try took within this
	// wait and left (its grant is its one keep-alive) — is not taken from
	// it. One it kept alive while it waited, ended early, is.
	earlier := []lost{{client: "c2", t: 1200, aliveUntil: 1190, lease: 0xb, renewedAt: 40, ttl: 1000, renewals: []int64{20, 40}}}
	v = check([]op{c1, wedged, released}, earlier, nil)
	assert.Equal(t, models.Fail, v.Result, v.Explanation)
	aTry := []lost{{client: "c2", t: 1070, aliveUntil: 1060, lease: 0xc, renewedAt: 60, ttl: 1000, renewals: []int64{60}}}
	v = check([]op{c1, wedged, released}, aTry, nil)
	assert.Equal(t, models.Fail, v.Result, v.Explanation)
	// The grant's end is its own lease's, not another lease of its
	// client's (a failed try's, ending while the grant still holds).
	holding := op{client: "c1", op: A, call: 0, ret: 10, token: 4, lease: 0xa}
	otherLease := []lost{{client: "c1", t: 60, aliveUntil: 55, lease: 0xd}}
	short := op{client: "c2", op: A, call: 50, ret: 1080, typ: history.Info}
	assert.NotEqual(t, models.Fail, check([]op{holding, short, released}, otherLease, nil).Result,
		"free from 110, the release: 0.97µs, within the bound; not from 60 (1.02µs)")
	kept := []lost{{client: "c2", t: 1200, aliveUntil: 1190, lease: 0xb, renewedAt: 400, ttl: 1000, renewals: []int64{40, 400}}}
	assert.NotEqual(t, models.Fail, check([]op{c1, wedged, released}, kept, nil).Result)
}

// handOffChecker checks the hand-off of the history that operations,
// lease losses and faults make, under h.
func handOffChecker(t *testing.T, h history.Header) func(ops []op, leases []lost, faults []fault) models.Verdict {
	return func(ops []op, leases []lost, faults []fault) models.Verdict {
		t.Helper()
		r, err := models.Check(h, build(ops, leases, faults), time.Second)
		require.NoError(t, err)
		return r.HandOff
	}
}
