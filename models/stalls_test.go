package models_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// A short run's history, for the tests below: c1 is granted once, c2's
// acquire fails 9 s in; runErr is a step gone astray, recorded last; short
// asks for two grants.
var (
	granted = []op{
		{client: "c1", op: A, call: 0, ret: ms(10), token: 10, lease: 0xa},
		{client: "c1", op: C, call: ms(20), ret: ms(30), token: 10, value: val(0), accepted: yes},
		{client: "c1", op: R, call: ms(40), ret: ms(50)},
		{client: "c2", op: A, call: ms(60), ret: ms(9000), typ: history.Fail},
	}
	runErr = history.Event{Time: ms(9000), Type: history.Observed, What: history.ObservedRunError,
		Error: "step 4 acquire c2: got \"error: context deadline exceeded\", the script expects a grant"}
	short = &history.Minimum{Grants: 2}
	// never is a lock that granted nothing: c1's acquire fails 9 s in.
	never = []op{{client: "c1", op: A, call: 0, ret: ms(9000), typ: history.Fail}}
)

func ms(n int64) int64 { return n * int64(time.Millisecond) }

// with is evs and more, in time order.
func with(evs []history.Event, more ...history.Event) []history.Event {
	evs = append(evs, more...)
	slices.SortStableFunc(evs, func(a, b history.Event) int { return int(a.Time - b.Time) })
	return evs
}

// A run that fell short — too little progress, or a step that went
// otherwise than its script — while the lab's own process stood still for
// a good part of it is the busy machine's doing: the environment says
// ERROR with the stalls as evidence, and the judgement is ERROR (run
// again), never the lock's FAIL. Without such stalls, or with a lock that
// granted nothing at all, the shortfall stays the lock's.
func TestAShortRunWhileTheLabStoodStillIsTheEnvironments(t *testing.T) {
	stall := func(from, to int64) history.Event {
		return history.Event{Time: ms(to), Type: history.Observed, What: history.ObservedStalled, StalledFrom: ms(from)}
	}
	for _, tc := range []struct {
		name    string
		events  []history.Event
		min     *history.Minimum
		env     models.Result
		verdict models.Result
		says    string
	}{
		{"too little progress, the lab stood still 1.2 s", with(build(granted, nil, nil), stall(1000, 2200)), short,
			models.Error, models.Error, "the run made too little progress (1 of 2 grants) while the lab's own process stood still once, for 1.2s"},
		{"too little progress, many short stalls", with(build(granted, nil, nil), stall(1000, 1300), stall(2000, 2300), stall(3000, 3300)), short,
			models.Error, models.Error, "stood still 3 times (300ms–300ms, 900ms in all) in a run of 9s"},
		{"too little progress, a quiet machine", build(granted, nil, nil), short, models.Pass, models.Fail, ""},
		{"too little progress, one short stall", with(build(granted, nil, nil), stall(1000, 1260)), short, models.Pass, models.Fail, ""},
		{"a lock that never granted", with(build(never, nil, nil), stall(1000, 3000)), short, models.NotApplicable, models.Fail, ""},
		{"a first acquire timed out, the lab stood still", with(build(never, nil, nil), stall(1000, 3000), runErr), nil,
			models.Error, models.Error, "a step went otherwise than its script (step 4 acquire c2"},
		{"a step timed out, the lab stood still", with(build(granted, nil, nil), stall(1000, 2200), runErr), nil,
			models.Error, models.Error, "a step went otherwise than its script (step 4 acquire c2"},
		{"a step timed out on a quiet machine", with(build(granted, nil, nil), runErr), nil, models.Pass, models.Error, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := history.Header{Minimum: tc.min}
			rep, _, j, err := models.JudgeHistory(h, tc.events, time.Second)
			require.NoError(t, err)
			assert.Equal(t, tc.env, rep.Environment.Result, rep.Environment.Explanation)
			assert.Equal(t, tc.verdict, j.Verdict, j.Error)
			assert.False(t, j.Matches)
			if tc.says != "" {
				assert.Contains(t, rep.Environment.Explanation, "The environment cut the run short: ")
				assert.Contains(t, rep.Environment.Explanation, tc.says)
				assert.Contains(t, rep.Environment.Evidence[0], "the lab's own process stood still ", "each stall is evidence")
				assert.Contains(t, rep.Environment.Evidence[0], ", from 1s to ")
			}
		})
	}
}

// A run that made too little progress while the machine was too busy to
// count for most of it — its CPUs oversubscribed, second after second — is
// the environment's too: ERROR (run again), not the lock's FAIL. Starved
// for less than half of it, or a lock that granted nothing, stays the
// lock's FAIL; a step gone astray stays an ERROR of its own; a check that
// caught the lock stays a FAIL: the pace explains no violation.
func TestATooSlowRunOnAStarvedMachineIsTheEnvironments(t *testing.T) {
	starved := func(from, to int64) []history.Event {
		var evs []history.Event
		for s := from; s < to; s += 1000 {
			evs = append(evs, history.Event{Time: ms(s + 1000), Type: history.Observed, What: history.ObservedStarved,
				StalledFrom: ms(s)})
		}
		return evs
	}
	overlap := []op{
		{client: "c1", op: A, call: 0, ret: ms(10), token: 10, lease: 0xa},
		{client: "c2", op: A, call: ms(20), ret: ms(30), token: 11, lease: 0xb},
		{client: "c1", op: C, call: ms(40), ret: ms(50), token: 10, value: val(0), accepted: yes},
		{client: "c2", op: C, call: ms(40), ret: ms(50), token: 11, value: val(0), accepted: yes},
	}
	twice := append(slices.Clone(granted[:3]),
		op{client: "c2", op: A, call: ms(60), ret: ms(70), token: 11, lease: 0xb},
		op{client: "c2", op: C, call: ms(80), ret: ms(90), token: 11, value: val(1), accepted: yes})
	for _, tc := range []struct {
		name    string
		events  []history.Event
		min     *history.Minimum
		env     models.Result
		verdict models.Result
	}{
		{"starved 6 s of 9", with(build(granted, nil, nil), starved(1000, 7000)...), short, models.Error, models.Error},
		{"starved 3 s of 9", with(build(granted, nil, nil), starved(1000, 4000)...), short, models.Pass, models.Fail},
		{"starved, a lock that never granted", with(build(never, nil, nil), starved(0, 8000)...), short, models.NotApplicable, models.Fail},
		{"starved, a step gone astray", with(build(granted, nil, nil), append(starved(1000, 8000), runErr)...), nil, models.Pass, models.Error},
		{"starved, enough progress", with(build(twice, nil, nil), starved(0, 8000)...), short, models.Pass, models.Pass},
		{"starved, a lock caught granting two at once", with(build(overlap, nil, nil), starved(0, 8000)...),
			&history.Minimum{Grants: 5}, models.Error, models.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, _, j, err := models.JudgeHistory(history.Header{Minimum: tc.min}, tc.events, time.Second)
			require.NoError(t, err)
			if tc.name == "starved, enough progress" {
				// Documented to FAIL, caught nothing, on a machine that
				// decided its timing: no PASS, and run again.
				bad, _, jb, err := models.JudgeHistory(history.Header{Minimum: tc.min, Expect: "FAIL"}, tc.events, time.Second)
				require.NoError(t, err)
				assert.Equal(t, models.Error, bad.Environment.Result)
				assert.Contains(t, bad.Environment.Explanation, "The environment decided the run's timing")
				assert.Equal(t, models.Error, jb.Verdict)
				assert.NotEmpty(t, models.Unjudged(jb.Matches, bad.Verdicts()), "run again")
			}
			require.NoError(t, err)
			assert.Equal(t, tc.env, rep.Environment.Result, rep.Environment.Explanation)
			assert.Equal(t, tc.verdict, j.Verdict, j.Error)
			if tc.env == models.Error && tc.verdict == models.Error {
				assert.Contains(t, rep.Environment.Explanation, "the run made too little progress (1 of 2 grants) while the "+
					"machine was too busy to count for 6s of the run's 9s")
				assert.NotEmpty(t, models.Unjudged(j.Matches, rep.Verdicts()), "run again")
			}
		})
	}
}

// The run's own error, recorded last in the history, judges the file as
// the run judged it: ERROR with that error, unless a check caught a
// violation.
func TestARecordedRunErrorJudgesTheFile(t *testing.T) {
	ops := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 10, lease: 0xa},
		{client: "c1", op: C, call: 20, ret: 30, token: 10, value: val(0), accepted: yes},
		{client: "c1", op: R, call: 40, ret: 50},
	}
	evs := append(build(ops, nil, nil), history.Event{Time: 50, Type: history.Observed, What: history.ObservedRunError,
		Error: "step 3 release c1: got ok, the script expects an error"})
	_, _, j, err := models.JudgeHistory(history.Header{}, evs, time.Second)
	require.NoError(t, err)
	assert.Equal(t, models.Error, j.Verdict)
	assert.Equal(t, "step 3 release c1: got ok, the script expects an error", j.Error)
	_, _, j, err = models.JudgeHistory(history.Header{}, build(ops, nil, nil), time.Second)
	require.NoError(t, err)
	assert.Equal(t, models.Pass, j.Verdict)

	evs[len(evs)-1].Error = ""
	_, _, _, err = models.JudgeHistory(history.Header{}, evs, time.Second)
	assert.ErrorContains(t, err, "observed run-error without an error")
}

// A schedule that did not do what its scenario claims (a vacuous one)
// while the lab's own process stood still is the environment's: a 400 ms
// cut the lab stood still in for a second is no brief cut. Without the
// stall it stays a vacuous schedule, ERROR, and not the environment's.
func TestAVacuousScheduleWhileTheLabStoodStillIsTheEnvironments(t *testing.T) {
	blip := []history.Effect{{Kind: history.EffectBlippedHolding, Clients: []string{"c1"}}}
	stall := history.Event{Time: ms(1700), Type: history.Observed, What: history.ObservedStalled, StalledFrom: ms(1000)}
	for _, tc := range []struct {
		name   string
		events []history.Event
		env    models.Result
	}{
		{"the lab stood still", with(build(granted, nil, []fault{{name: "cut-client c1", start: ms(900), end: ms(2100)}}), stall),
			models.Error},
		{"a quiet machine", build(granted, nil, []fault{{name: "cut-client c1", start: ms(900), end: ms(2100)}}), models.Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, effects, j, err := models.JudgeHistory(history.Header{Effects: blip}, tc.events, time.Second)
			require.NoError(t, err)
			require.NotEmpty(t, models.Vacuous(effects), "the cut lasted longer than a TTL")
			assert.Equal(t, models.Error, j.Verdict)
			assert.Equal(t, tc.env, rep.Environment.Result, rep.Environment.Explanation)
			if tc.env == models.Error {
				assert.Contains(t, rep.Environment.Explanation, "the schedule did not do what its scenario claims (did not happen: ")
				assert.NotEmpty(t, models.Unjudged(j.Matches, rep.Verdicts()), "run again")
			}
		})
	}
}
