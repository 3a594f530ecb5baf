package models_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// A lock that stops granting after three grants passes every safety check;
// the minimum progress its scenario states is what catches it.
func TestProgressFailsARunThatDidTooLittle(t *testing.T) {
	var ops []op
	for i := range 3 {
		at := int64(i) * 100
		ops = append(ops,
			op{client: "c1", op: A, call: at, ret: at + 10, token: int64(i + 1)},
			op{client: "c1", op: C, call: at + 20, ret: at + 30, token: int64(i + 1), value: val(0), accepted: no},
			op{client: "c1", op: R, call: at + 40, ret: at + 50})
	}
	events := build(ops, nil, nil)
	h := history.Header{Minimum: &history.Minimum{Grants: 50, Sections: 50, Accepted: 1}}
	r, err := models.Check(h, events, time.Second)
	require.NoError(t, err)
	for _, v := range r.Safety {
		assert.NotEqual(t, models.Fail, v.Result, "%s: nothing unsafe happened", v.Check)
	}
	assert.Equal(t, models.Fail, r.Progress.Result)
	assert.Equal(t, models.Fail, r.Result(), "too little progress is never a pass")
	assert.Contains(t, r.Progress.Explanation, "3 of 50 grants; 3 of 50 critical sections completed; 0 of 1 writes accepted")

	h.Minimum = &history.Minimum{Grants: 3, Sections: 3}
	r, err = models.Check(h, events, time.Second)
	require.NoError(t, err)
	assert.Equal(t, models.Pass, r.Progress.Result)

	r, err = models.Check(history.Header{}, events, time.Second)
	require.NoError(t, err)
	assert.Equal(t, models.NotApplicable, r.Progress.Result, "no minimum stated")
}

// After the last fault heals, the lock must grant again within the bound.
func TestProgressRequiresAGrantAfterTheLastFault(t *testing.T) {
	ops := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 1},
		{client: "c1", op: R, call: 20, ret: 30},
		{client: "c2", op: A, call: 40, ret: 900, token: 2},
		{client: "c2", op: R, call: 910, ret: 920},
	}
	faults := []fault{{name: "kill-leader", start: 35, end: 100}}
	h := history.Header{Minimum: &history.Minimum{Grants: 1, RegrantWithin: 1000}}
	r, err := models.Check(h, build(ops, nil, faults), time.Second)
	require.NoError(t, err)
	assert.Equal(t, models.Pass, r.Progress.Result)

	// c2 asked during the fault and waited past the bound after it: the
	// lock was slow while someone waited, which liveness says (once).
	h.Minimum.RegrantWithin = 500
	r, err = models.Check(h, build(ops, nil, faults), time.Second)
	require.NoError(t, err)
	assert.Equal(t, models.Fail, r.Liveness.Result)
	assert.Equal(t, models.Pass, r.Progress.Result, "the wedge is liveness's to say")

	// Nobody asked until late: the lock cannot be blamed, but the run
	// never showed it granting again in time.
	late := []op{ops[0], ops[1], {client: "c2", op: A, call: 850, ret: 900, token: 2}, ops[3]}
	r, err = models.Check(h, build(late, nil, faults), time.Second)
	require.NoError(t, err)
	assert.Equal(t, models.Fail, r.Progress.Result)
	assert.Contains(t, r.Progress.Explanation, "to grant again")
	assert.Equal(t, models.NotApplicable, r.Liveness.Result)

	r, err = models.Check(h, build(ops[:2], nil, faults), time.Second)
	require.NoError(t, err)
	assert.Equal(t, models.Fail, r.Progress.Result)
	assert.Contains(t, r.Progress.Explanation, "No grant after the last fault (kill-leader)")
}

// A lock held across the heal is granted again from when its holder gave
// it up, not from the heal: the holder's time is not the lock's delay.
func TestProgressCountsARegrantFromWhenTheLockCameFree(t *testing.T) {
	faults := []fault{{name: "lose-request c2", start: 20, end: 30}}
	h := history.Header{Minimum: &history.Minimum{Grants: 2, RegrantWithin: 500}}
	held := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 1},
		{client: "c2", op: A, call: 20, ret: 1500, typ: history.Fail}, // rode the break out to its deadline
		{client: "c1", op: R, call: 1600, ret: 1610},
	}
	quick := append(held, op{client: "c1", op: A, call: 1700, ret: 1800, token: 2})
	r, err := models.Check(h, build(quick, nil, faults), time.Second)
	require.NoError(t, err)
	assert.Equal(t, models.Pass, r.Progress.Result, r.Progress.Explanation)
	assert.Equal(t, models.Pass, r.Liveness.Result, r.Liveness.Explanation)
	assert.Contains(t, r.Liveness.Explanation, "after the grant held when the last fault (lose-request c2) ended was given up")

	slow := append(held, op{client: "c1", op: A, call: 1700, ret: 2200, token: 2})
	r, err = models.Check(h, build(slow, nil, faults), time.Second)
	require.NoError(t, err)
	assert.Equal(t, models.Fail, r.Progress.Result, "slow once the lock came free")
	assert.Contains(t, r.Progress.Explanation, "took 600ns after the grant held when the last fault (lose-request c2) ended was given up")
}

// Liveness: after the last fault, an acquire that waits past the bound
// while nobody is granted is a lock that keeps the lock for nobody (FAIL,
// evidence as a safety violation is); one that waits while others are
// granted, or gives up early, is not.
func TestLivenessCatchesAWedge(t *testing.T) {
	faults := []fault{{name: "lose-answer c2", start: 10, end: 50}}
	h := history.Header{Minimum: &history.Minimum{Grants: 1, RegrantWithin: 1000}}
	check := func(ops []op) models.Verdict {
		t.Helper()
		r, err := models.Check(h, build(ops, nil, faults), time.Second)
		require.NoError(t, err)
		return r.Liveness
	}
	lostAnswer := op{client: "c2", op: A, call: 10, ret: 50, typ: history.Info}
	wedged := check([]op{lostAnswer, {client: "c1", op: A, call: 60, ret: 2000, typ: history.Info}})
	assert.Equal(t, models.Fail, wedged.Result)
	assert.Contains(t, wedged.Explanation, "c1 waited 1.94µs for the lock after the last fault (lose-answer c2) ended")
	assert.Len(t, wedged.Evidence, 1)

	granted := check([]op{lostAnswer, {client: "c1", op: A, call: 60, ret: 80, token: 5}})
	assert.Equal(t, models.Pass, granted.Result, granted.Explanation)

	// c3 waits long, but c1 is granted within the bound: a queue, not a
	// wedge.
	queued := check([]op{lostAnswer, {client: "c1", op: A, call: 60, ret: 80, token: 5},
		{client: "c3", op: A, call: 70, ret: 3000, typ: history.Info}})
	assert.Equal(t, models.Pass, queued.Result, queued.Explanation)

	// The lost acquire itself (unknown, Return ∞) stopped waiting when it
	// was answered: it is no wedge, and nobody else asked.
	alone := check([]op{lostAnswer, {client: "c1", op: A, call: 2000, ret: 2010, token: 5}})
	assert.NotEqual(t, models.Fail, alone.Result, alone.Explanation)

	// c2 rode out its lost answer and was granted: c1 waits behind a
	// holder that never released (the script never asked it to), not
	// behind a lock kept for nobody.
	rodeOut := op{client: "c2", op: A, call: 10, ret: 40, token: 4}
	held := check([]op{rodeOut, {client: "c1", op: A, call: 60, ret: 2000, typ: history.Info}})
	assert.NotEqual(t, models.Fail, held.Result, held.Explanation)
	// Nor once c2's lease ended, though c2 released only later: the lock
	// was free, and nobody got it.
	r, err := models.Check(h, build([]op{{client: "c2", op: A, call: 10, ret: 40, token: 4, lease: 0xa},
		{client: "c1", op: A, call: 60, ret: 2000, typ: history.Info}, {client: "c2", op: R, call: 3000, ret: 3010}},
		[]lost{{client: "c2", t: 70, aliveUntil: 65, lease: 0xa}}, faults), time.Second)
	require.NoError(t, err)
	assert.Equal(t, models.Fail, r.Liveness.Result, r.Liveness.Explanation)
	// Once c2 released, a wait past the bound is a wedge again.
	wedgedAfter := check([]op{rodeOut, {client: "c2", op: R, call: 45, ret: 48},
		{client: "c1", op: A, call: 60, ret: 2000, typ: history.Info}})
	assert.Equal(t, models.Fail, wedgedAfter.Result, wedgedAfter.Explanation)

	h.Minimum.RegrantWithin = 0
	assert.Equal(t, models.NotApplicable, check([]op{lostAnswer}).Result, "no bound stated")
}

// The lost fraction is computed from the history alone, so an offline check
// reproduces it.
func TestLostFractionFromTheFinalValue(t *testing.T) {
	events := build(cases[2].ops, cases[2].leases, nil) // two accepted increments, one lost
	events = append(events, history.Event{Time: 10_000, Type: history.Final, Value: val(1)})
	r, err := models.Check(history.Header{}, events, time.Second)
	require.NoError(t, err)
	require.NotNil(t, r.LostFraction)
	assert.InDelta(t, 0.5, *r.LostFraction, 1e-9)

	r, err = models.Check(history.Header{}, events[:len(events)-1], time.Second)
	require.NoError(t, err)
	assert.Nil(t, r.LostFraction, "no final value recorded")
}
