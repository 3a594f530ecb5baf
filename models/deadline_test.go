package models_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// Acquire returns by its context's deadline: a grant more than
// history.DeadlineGrace after it, or no answer history.DeadlineWait after
// it (or by the history's end), is the lock's FAIL, unless the lab's own
// process stood still meanwhile, or — for a call that did not return — a
// fault held its client from its member; an error returned late, but
// within history.DeadlineWait, is not judged.
func TestCheckDeadline(t *testing.T) {
	s := func(n float64) int64 { return int64(n * float64(time.Second)) }
	acquire := func(answer history.Type, at float64, token int64, err string) []history.Event {
		evs := []history.Event{
			{Time: s(0), Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l", Deadline: s(2)},
		}
		if answer != "" {
			evs = append(evs, history.Event{Time: s(at), Type: answer, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l", Token: token, Error: err})
		}
		return evs
	}
	stall := history.Event{Time: s(3.5), Type: history.Observed, What: history.ObservedStalled, StalledFrom: s(2.5)}
	end := history.Event{Time: s(14), Type: history.Final, Value: new(int64)}
	// fault puts the call on c1, connected to m1, with f open from 1 s to 13 s.
	fault := func(f string, call []history.Event) []history.Event {
		evs := []history.Event{{Type: history.Observed, What: history.ObservedConnected, Client: "c1", Member: "m1"}, call[0],
			{Time: s(1), Type: history.FaultStart, ID: 2, Fault: f}}
		evs = append(evs, call[1:]...)
		return append(evs, history.Event{Time: s(13), Type: history.FaultEnd, ID: 2, Fault: f}, end)
	}
	for _, tc := range []struct {
		name     string
		events   []history.Event
		want     models.Result
		contains string
	}{
		{"a grant in time", append(acquire(history.Ok, 1, 10, ""), end), models.Pass, "All 1 acquires returned by their context's deadline"},
		{"an error at its deadline", append(acquire(history.Info, 2.2, 0, "context deadline exceeded"), end), models.Pass, ""},
		{"a grant after its deadline", append(acquire(history.Ok, 5, 10, ""), end), models.Fail,
			"returned a grant (token 10) 3s past its deadline"},
		{"an error after its deadline, within the wait", append(acquire(history.Info, 3.5, 0, "lock: gave up"), end), models.Pass, ""},
		{"no answer when the lab stopped waiting", append(acquire(history.Info, 12, 0, "lock: Acquire had not returned"), end), models.Fail,
			`had still not returned 10s past its deadline, when the lab stopped waiting for it ("lock: Acquire had not returned")`},
		{"no answer by the end", append(acquire("", 0, 0, ""), end), models.Fail, "had not answered when the history ended, 12s past"},
		{"late while the lab stood still", []history.Event{acquire("", 0, 0, "")[0], stall, acquire(history.Ok, 4, 10, "")[1], end},
			models.Pass, ""},
		{"no answer while its member was down", fault("kill-member m1", acquire(history.Info, 12, 0, "lock: Acquire had not returned")),
			models.Pass, ""},
		{"no answer while another member was down", fault("kill-member m2", acquire(history.Info, 12, 0, "lock: Acquire had not returned")),
			models.Fail, "had still not returned"},
		{"a late grant while its member was down", fault("kill-member m1", acquire(history.Ok, 5, 10, "")), models.Fail,
			"returned a grant (token 10) 3s past its deadline"},
		{"no deadline recorded", []history.Event{
			{Time: s(0), Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l"},
			{Time: s(7), Type: history.Ok, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l", Token: 10}, end,
		}, models.NotApplicable, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, tc.events, time.Second)
			var v models.Verdict
			for _, c := range r.Safety {
				if c.Check == "deadline" {
					v = c
				}
			}
			assert.Equal(t, tc.want, v.Result, v.Explanation)
			assert.Contains(t, v.Explanation, tc.contains)
			if tc.want == models.Fail {
				assert.NotEmpty(t, v.Evidence)
				assert.Equal(t, models.Fail, r.Result(), "a missed deadline is the lock's FAIL")
			}
		})
	}
}

// A deadline belongs to an acquire, at or after its call.
func TestADeadlineOnlyOnAnAcquire(t *testing.T) {
	for _, e := range []history.Event{
		{Time: 10, Type: history.Invoke, ID: 1, Client: "c1", Op: history.Release, Lock: "l", Deadline: 20},
		{Time: 10, Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l", Deadline: 5},
	} {
		assert.ErrorContains(t, history.Validate([]history.Event{e}), "deadline")
	}
}
