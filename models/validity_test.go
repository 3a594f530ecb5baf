package models_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// A grant whose key the lab saw gone while its holder held it (lease alive,
// no release of its own begun) was freed by someone else: validity fails on
// that observation alone, with or without a second grant yet.
func TestValidityFailsAGrantFreedByAnother(t *testing.T) {
	ops := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 2, lease: 0xa},
		{client: "c2", op: R, call: 15, ret: 18, token: 1},
		{client: "c1", op: R, call: 30, ret: 40, typ: history.Fail, token: 2},
	}
	clean := build(ops, nil, nil)
	assert.Equal(t, models.Pass, verdictOf(mustCheck(t, clean, time.Second), "validity"))
	gone := append(slices.Clone(clean[:4]), history.Event{Time: 20, Type: history.Observed,
		What: history.ObservedGrantGone, Client: "c1", Token: 2})
	gone = append(gone, clean[4:]...)
	v := mustCheck(t, gone, time.Second)
	assert.Equal(t, models.Fail, verdictOf(v, "validity"))
	assert.Contains(t, explanationOf(v, "validity"), "Something other than c1 freed c1's lock")

	// The same client's retried release of its older grant, begun before
	// the key was seen gone, is named as what freed it.
	retried := build([]op{
		{client: "c1", op: A, call: 0, ret: 1, token: 1, lease: 0xa},
		{client: "c1", op: R, call: 2, ret: 3, typ: history.Info, token: 1},
		{client: "c1", op: A, call: 4, ret: 10, token: 2, lease: 0xa},
		{client: "c1", op: R, call: 15, ret: 18, token: 1},
	}, nil, nil)
	retried = append(retried, history.Event{Time: 19, Type: history.Observed, What: history.ObservedGrantGone, Client: "c1", Token: 2})
	v = mustCheck(t, retried, time.Second)
	assert.Equal(t, models.Fail, verdictOf(v, "validity"))
	assert.Contains(t, explanationOf(v, "validity"), "c1's release of an older grant (token 1) freed the lock c1 held then (token 2)")

	// Gone while the server that held it was killed (a Redis primary
	// failing over): the failover is named.
	spec := history.FaultSpec{Kind: history.FaultKillMember, Member: "m1"}
	killed := append(slices.Clone(clean[:4]),
		history.Event{Time: 19, Type: history.FaultStart, ID: 1, Fault: spec.String(), Spec: &spec, Target: "m1"},
		history.Event{Time: 20, Type: history.Observed, What: history.ObservedGrantGone, Client: "c1", Token: 2})
	killed = append(killed, clean[4:]...)
	v = mustCheck(t, killed, time.Second)
	assert.Equal(t, models.Fail, verdictOf(v, "validity"))
	assert.Contains(t, explanationOf(v, "validity"), "once m1, the server that held it, was killed")

	// A grant made while another client still held the lock, and then
	// seen gone (its key never stood where the lock stands: a Redlock
	// that counts two masters of five a majority), is the overlap.
	beside := build([]op{
		{client: "c1", op: A, call: 0, ret: 10, token: 0, lease: 0xa},
		{client: "c2", op: A, call: 5, ret: 20, token: 0, lease: 0xb},
		{client: "c2", op: R, call: 40, ret: 45, token: 0},
		{client: "c1", op: R, call: 50, ret: 55, token: 0},
	}, nil, nil)
	beside = append(beside, history.Event{Time: 25, Type: history.Observed, What: history.ObservedGrantGone, Client: "c2"})
	slices.SortStableFunc(beside, func(x, y history.Event) int { return int(x.Time - y.Time) })
	v = mustCheck(t, beside, time.Second)
	assert.Equal(t, models.Fail, verdictOf(v, "validity"))
	assert.Contains(t, explanationOf(v, "validity"), "The lock granted c2 while c1 still validly held it")
}

func explanationOf(r models.Report, check string) string {
	for _, v := range r.Verdicts() {
		if v.Check == check {
			return v.Explanation
		}
	}
	return ""
}

func verdictOf(r models.Report, check string) models.Result {
	for _, v := range r.Verdicts() {
		if v.Check == check {
			return v.Result
		}
	}
	return ""
}

// A release the lock answered "not held" ended the grant all the same when
// the server showed it taking effect while it was under way (its answer
// lost on the wire): a grant to another after it is no overlap. Without
// that sight, the refused release ends nothing and the grant overlaps.
func TestValidityTakesAReleaseTheServerShowedTakingEffect(t *testing.T) {
	ops := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 0, lease: 0xa},
		{client: "c1", op: R, call: 20, ret: 40, typ: history.Fail, token: 0},
		{client: "c2", op: A, call: 50, ret: 60, token: 0, lease: 0xb},
		{client: "c2", op: R, call: 70, ret: 80, token: 0},
	}
	unseen := build(ops, nil, nil)
	assert.Equal(t, models.Fail, verdictOf(mustCheck(t, unseen, time.Second), "validity"))

	seen := append(build(ops, nil, nil), history.Event{Time: 30, Type: history.Observed,
		What: history.ObservedReleased, Client: "c1"})
	slices.SortStableFunc(seen, func(x, y history.Event) int { return int(x.Time - y.Time) })
	assert.Equal(t, models.Pass, verdictOf(mustCheck(t, seen, time.Second), "validity"))

	// Seen for another client's release, or after c1's had returned, it
	// says nothing of c1's.
	late := append(build(ops, nil, nil), history.Event{Time: 45, Type: history.Observed,
		What: history.ObservedReleased, Client: "c1"})
	slices.SortStableFunc(late, func(x, y history.Event) int { return int(x.Time - y.Time) })
	assert.Equal(t, models.Fail, verdictOf(mustCheck(t, late, time.Second), "validity"))
}
