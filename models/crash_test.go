package models_test

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// crashedHolder is the crashed-holder history: c1 holds (lease a), crashes
// at 30 and is started again; its lease ends at 150 (alive until 140); c2,
// waiting since 20, is granted at grantAt; the restarted c1 acquires again
// after c2 released.
func crashedHolder(grantAt int64, crashed bool) []history.Event {
	ops := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 10, lease: 0xa},
		{client: "c1", op: C, call: 11, ret: 12, token: 10, value: val(0), accepted: yes},
		{client: "c2", op: A, call: 20, ret: grantAt, token: 12, lease: 0xb},
		{client: "c2", op: C, call: 200, ret: 210, token: 12, value: val(1), accepted: yes},
		{client: "c2", op: R, call: 220, ret: 230},
		{client: "c1", op: A, call: 240, ret: 250, token: 14, lease: 0xc},
		{client: "c1", op: C, call: 260, ret: 270, token: 14, value: val(2), accepted: yes},
		{client: "c1", op: R, call: 280, ret: 290},
	}
	events := build(ops, []lost{{client: "c1", t: 150, aliveUntil: 140, lease: 0xa}},
		[]fault{{name: "crash-client c1", start: 30, end: 31}})
	if crashed {
		events = append(events, history.Event{Time: 31, Type: history.Observed, What: history.ObservedCrashed, Client: "c1"})
		slices.SortStableFunc(events, func(a, b history.Event) int { return cmp.Compare(a.Time, b.Time) })
	}
	return events
}

// A holder that crashed believes nothing after its death: with the crash
// on record, its restarted self's new grant and c2's grant are one holder
// at a time, and every check passes. Without it, c1 never released its
// first grant, and the belief check finds two holders — the crash is what
// the history must say.
func TestCrashedHolderHoldsNothing(t *testing.T) {
	report := mustCheck(t, crashedHolder(160, true), 10*time.Second)
	assert.Equal(t, models.Pass, report.Belief.Result, report.Belief.Explanation)
	for _, v := range report.Safety {
		assert.Contains(t, []models.Result{models.Pass, models.NotApplicable}, v.Result, "%s: %s", v.Check, v.Explanation)
	}

	report = mustCheck(t, crashedHolder(160, false), 10*time.Second)
	assert.Equal(t, models.Fail, report.Belief.Result, "with no crash on record, c1 still believed it held t10")
}

// A crash frees nothing on the server: a grant to c2 before the crashed
// holder's lease ended is a second holder of the lock, and the validity
// check fails it, crash or no crash.
func TestCrashFreesNothing(t *testing.T) {
	report := mustCheck(t, crashedHolder(100, true), 10*time.Second)
	verdicts := map[string]models.Result{}
	for _, v := range report.Safety {
		verdicts[v.Check] = v.Result
	}
	assert.Equal(t, models.Fail, verdicts["validity"], "c2 was granted while c1's lease, and so its key, still lived")
}
