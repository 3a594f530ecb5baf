package models_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// Once the server has ended a held grant's lease, the grant's Lost closes
// within history.LostGrace, or told-lost FAILs; a grant without Lost, a
// crashed holder, a history that ends too soon, are not judged.
func TestCheckToldLost(t *testing.T) {
	s := func(n float64) int64 { return int64(n * float64(time.Second)) }
	grant := func(tells bool) []history.Event {
		return []history.Event{
			{Time: s(0), Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l"},
			{Time: s(0.1), Type: history.Ok, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l", Token: 10, Lease: 0xa, Tells: tells},
			{Time: s(3), Type: history.LeaseLost, Client: "c1", Lease: 0xa, AliveUntil: s(2.8)},
		}
	}
	told := func(at float64) history.Event {
		return history.Event{Time: s(at), Type: history.Observed, What: history.ObservedToldLost, Client: "c1", Token: 10}
	}
	end := func(at float64) history.Event {
		return history.Event{Time: s(at), Type: history.Final, Value: new(int64)}
	}
	crash := history.Event{Time: s(3.5), Type: history.Observed, What: history.ObservedCrashed, Client: "c1"}
	for _, tc := range []struct {
		name     string
		events   []history.Event
		want     models.Result
		contains string
	}{
		{"told in time", append(grant(true), told(3.5), end(7)), models.Pass, "closed within 2s"},
		{"told late", append(grant(true), told(6), end(7)), models.Fail, "closed only 3s later"},
		{"never told", append(grant(true), end(7)), models.Fail, "had not closed 4s later, when the history ended"},
		{"the history ends too soon", append(grant(true), end(4)), models.NotApplicable, ""},
		{"the lock cannot tell", append(grant(false), end(7)), models.NotApplicable, ""},
		{"the holder crashed", append(grant(true), crash, end(7)), models.NotApplicable, ""},
		{"the lab replaced the Locker first", append(grant(true),
			history.Event{Time: s(4), Type: history.Observed, What: history.ObservedUnfollowed, Client: "c1", Token: 10}, end(7)),
			models.NotApplicable, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, tc.events, time.Second)
			var v models.Verdict
			for _, c := range r.Safety {
				if c.Check == "told-lost" {
					v = c
				}
			}
			assert.Equal(t, tc.want, v.Result, v.Explanation)
			assert.Contains(t, v.Explanation, tc.contains)
		})
	}
}

// A lock that gives no token has its Lost events known by client alone:
// the first after the grant's return is the grant's own, and one that
// came before it (an earlier grant's) tells nothing about it.
func TestToldLostOfAGrantWithNoToken(t *testing.T) {
	s := func(n float64) int64 { return int64(n * float64(time.Second)) }
	told := func(at float64) history.Event {
		return history.Event{Time: s(at), Type: history.Observed, What: history.ObservedToldLost, Client: "c1"}
	}
	events := func(before, after []history.Event) []history.Event {
		evs := append([]history.Event{{Time: s(0), Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l"}},
			before...)
		evs = append(evs,
			history.Event{Time: s(1), Type: history.Ok, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l", Lease: 0xa, Tells: true},
			history.Event{Time: s(3), Type: history.LeaseLost, Client: "c1", Lease: 0xa, AliveUntil: s(2.8)})
		return append(append(evs, after...), history.Event{Time: s(7), Type: history.Final, Value: new(int64)})
	}
	for _, tc := range []struct {
		name string
		evs  []history.Event
		want models.Result
	}{
		{"told in time", events(nil, []history.Event{told(3.5)}), models.Pass},
		{"only an earlier grant's word", events([]history.Event{told(0.5)}, nil), models.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, verdictOf(mustCheck(t, tc.evs, time.Second), "told-lost"))
		})
	}
}
