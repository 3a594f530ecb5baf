package models_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// A waiter's lease that ends while it waits, though its client renewed it
// in time (or the lab stood still), is the environment's doing, as a
// holder's is: the lock rightly tells the waiter its session expired, and
// what the script or the progress check then misses is no evidence against
// it. A lease the client stopped renewing before it began to wait (one its
// lock revoked at a release), one it revoked itself while it waited, one a
// fault starved, and one the waiter was granted on (expired-waiter's
// finding) are not.
func TestEnvironmentWaiterLapse(t *testing.T) {
	waiter := func(typ history.Type, lease int64) []op {
		return []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 10, lease: 0xa},
			{client: "c2", op: A, call: 20, ret: 1450, typ: typ, token: 12, lease: lease},
			{client: "c1", op: C, call: 30, ret: 900, token: 10, value: val(0), accepted: yes},
			{client: "c1", op: R, call: 910, ret: 920},
		}
	}
	failed := waiter(history.Fail, 0)
	renewed := []lost{{client: "c2", t: 1400, aliveUntil: 1300, lease: 0xb, renewedAt: 900, ttl: 1000}}
	stalled := func(evs []history.Event) []history.Event {
		at := slices.IndexFunc(evs, func(e history.Event) bool { return e.Time > 1350 })
		return slices.Insert(evs, at, history.Event{Time: 1350, Type: history.Observed, What: history.ObservedStalled, StalledFrom: 1000})
	}
	for _, tc := range []struct {
		name   string
		events []history.Event
		want   models.Result
	}{
		{"renewed while it waited, told its session expired", build(failed, renewed, nil), models.Error},
		{"renewed while it waited, granted on a new lease", build(waiter(history.Ok, 0xc), renewed, nil), models.Error},
		{"the lab stood still", stalled(build(failed, []lost{{client: "c2", t: 1400, aliveUntil: 1300, lease: 0xb, renewedAt: 100, ttl: 1000}}, nil)), models.Error},
		{"granted on the lease that ended: the lock's error", build(waiter(history.Ok, 0xb), renewed, nil), models.Pass},
		{"renewals stopped before it waited", build(failed, []lost{{client: "c2", t: 1400, aliveUntil: 1300, lease: 0xb, renewedAt: 15, ttl: 1000}}, nil), models.Pass},
		{"no keep-alive seen", build(failed, []lost{{client: "c2", t: 1400, aliveUntil: 1300, lease: 0xb, ttl: 1000}}, nil), models.Pass},
		{"a cut that starved it", build(failed, renewed, []fault{{name: "cut-client c2", start: 950, end: 1380}}), models.Pass},
		{"the lease ended after the acquire returned", build(failed, []lost{{client: "c2", t: 1500, aliveUntil: 1300, lease: 0xb, renewedAt: 900, ttl: 1000}}, nil), models.Pass},
		// A lock that takes a lease for each try and revokes it when the
		// try fails ended that lease itself: no lapse, nobody's fault.
		{"its own client revoked it", build(waiter(history.Ok, 0xc), []lost{{client: "c2", t: 1400, aliveUntil: 1300, lease: 0xb, renewedAt: 900, ttl: 1000, revokedAt: 1320}}, nil), models.Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := mustCheck(t, tc.events, time.Second).Environment
			assert.Equal(t, tc.want, env.Result, env.Explanation)
			if tc.want == models.Error {
				assert.Contains(t, env.Explanation, "c2's lease ended while it waited for the lock")
				assert.Len(t, env.Evidence, 2)
			}
		})
	}
}

// A lease the server still had alive well past what the keep-alives the lab
// saw allow (a TTL from the last one, a second more for TimeToLive's
// rounding, half a TTL for the lab's polling) was kept alive by the
// server's own time standing still: a process starved of CPU, which the
// lab's stall watch missed. Its end is the environment's (ERROR), not the
// lock's. A lease read alive only within that allowance — a lock that
// stopped renewing, the lease read alive for a while after its end — stays
// the lock's: lease-kept FAILs it.
func TestALeaseOutlivingItsKeepAlivesIsTheEnvironments(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	ops := []op{
		{client: "c1", op: A, call: 0, ret: ms(10), token: 10, lease: 0xa},
		{client: "c2", op: A, call: ms(20), ret: ms(6000), token: 12, lease: 0xb},
		{client: "c1", op: C, call: ms(30), ret: ms(7000), token: 10, value: val(0), accepted: yes},
		{client: "c2", op: C, call: ms(6010), ret: ms(6020), token: 12, value: val(0), accepted: yes},
		{client: "c1", op: R, call: ms(7010), ret: ms(7020), typ: history.Fail},
		{client: "c2", op: R, call: ms(7030), ret: ms(7040)},
	}
	loss := func(aliveUntil int64, renewals ...int64) []lost {
		l := lost{client: "c1", t: aliveUntil + ms(100), aliveUntil: aliveUntil, lease: 0xa, ttl: ms(1000), renewals: renewals}
		if len(renewals) > 0 {
			l.renewedAt = renewals[len(renewals)-1]
		}
		return []lost{l}
	}
	for _, tc := range []struct {
		name      string
		lost      []lost
		leaseKept models.Result
		env       models.Result
	}{
		{"alive 3 s after the last keep-alive", loss(ms(4000), ms(10), ms(300), ms(600), ms(1000)), models.Pass, models.Error},
		{"read alive 1.9 s after it", loss(ms(2900), ms(10), ms(300), ms(600), ms(1000)), models.Fail, models.Pass},
		{"alive 3 s after the grant, never renewed", loss(ms(3010), ms(10)), models.Pass, models.Error},
		{"no keep-alive or grant known", loss(ms(4000)), models.Fail, models.Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, build(ops, tc.lost, nil), time.Second)
			assert.Equal(t, tc.leaseKept, verdictOf(r, "lease-kept"))
			assert.Equal(t, tc.env, r.Environment.Result, r.Environment.Explanation)
			if tc.env == models.Error {
				assert.Contains(t, r.Environment.Explanation, "the server's own time had stood still")
			}
		})
	}
}

// A holder's lease that its own client revoked before the holder began to
// release is the lock's own doing: lease-kept FAILs it, saying so, and the
// environment takes no blame for it however the client renewed it. An
// idle client's lease it revoked is nobody's lapse either.
func TestARevokedLeaseIsTheClientsOwnDoing(t *testing.T) {
	ops := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 10, lease: 0xa},
		{client: "c1", op: C, call: 20, ret: 2000, token: 10, value: val(0), accepted: yes},
		{client: "c1", op: R, call: 2010, ret: 2020},
	}
	held := []lost{{client: "c1", t: 1400, aliveUntil: 1300, lease: 0xa, renewedAt: 1200, ttl: 1000, renewals: []int64{0, 1200}, revokedAt: 1350}}
	r := mustCheck(t, build(ops, held, nil), time.Second)
	kept := r.Safety[slices.IndexFunc(r.Safety, func(v models.Verdict) bool { return v.Check == "lease-kept" })]
	assert.Equal(t, models.Fail, kept.Result)
	assert.Contains(t, kept.Explanation, "c1's own client revoked the lease it held the lock on, at 1.35µs, 1.34µs into its hold")
	assert.Contains(t, kept.Evidence, "server: c1's lease a ended, revoked by its own client [alive at 1.3µs, revoked at 1.35µs, gone at 1.4µs]")
	assert.Equal(t, models.Pass, r.Environment.Result, r.Environment.Explanation)

	held[0].revokedAt = 0 // renewed in time, not revoked: the machine's
	r = mustCheck(t, build(ops, held, nil), time.Second)
	assert.Equal(t, models.Error, r.Environment.Result, r.Environment.Explanation)

	idle := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 10, lease: 0xa},
		{client: "c1", op: R, call: 20, ret: 30},
		{client: "c2", op: A, call: 4000, ret: 4010, token: 12, lease: 0xb},
		{client: "c2", op: R, call: 4020, ret: 4030},
	}
	revoked := []lost{{client: "c1", t: 3500, aliveUntil: 3300, lease: 0xa, ttl: 3000, renewals: []int64{0, 3150}, renewedAt: 3150, revokedAt: 3400}}
	r = mustCheck(t, build(idle, revoked, nil), time.Second)
	assert.Equal(t, models.Pass, r.Environment.Result, r.Environment.Explanation)
}

// A client that went on sending keep-alives and heard no answer for a TTL,
// with no fault on its way to the server, could not know its lease lived:
// a renewer that gives it up then is right, and the lapse is the busy
// machine's (ERROR), not the lock's. One that stopped asking before half a
// TTL (it gave up at its first unanswered keep-alive), or whose answers
// came, is the lock's (lease-kept FAIL).
func TestKeepAlivesTheServerLeftUnansweredAreTheEnvironments(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	ops := []op{
		{client: "c1", op: A, call: 0, ret: ms(10), token: 10, lease: 0xa},
		{client: "c1", op: C, call: ms(20), ret: ms(5000), token: 10, value: val(0), accepted: yes},
		{client: "c1", op: R, call: ms(5010), ret: ms(5020), typ: history.Fail},
	}
	loss := func(renewals, answers []int64) []lost {
		return []lost{{client: "c1", t: ms(3500), aliveUntil: ms(3400), lease: 0xa, ttl: ms(1000),
			renewedAt: renewals[len(renewals)-1], renewals: renewals, keptAlive: answers}}
	}
	for _, tc := range []struct {
		name      string
		lost      []lost
		faults    []fault
		leaseKept models.Result
		env       models.Result
	}{
		{"unanswered while it kept asking", loss([]int64{ms(300), ms(600), ms(900), ms(1250), ms(1600)},
			[]int64{ms(310), ms(610), ms(910)}), nil, models.Pass, models.Error},
		{"gave up at its first unanswered keep-alive", loss([]int64{ms(300), ms(600), ms(900), ms(1250)},
			[]int64{ms(310), ms(610), ms(910)}), nil, models.Fail, models.Pass},
		{"answered, then it stopped", loss([]int64{ms(300), ms(600), ms(900), ms(1250), ms(1600)},
			[]int64{ms(310), ms(610), ms(910), ms(1260), ms(1610)}), nil, models.Fail, models.Pass},
		// A fault that cannot reach it (another client's link) changes
		// nothing.
		{"another client's link cut", loss([]int64{ms(300), ms(600), ms(900), ms(1250), ms(1600)},
			[]int64{ms(310), ms(610), ms(910)}), []fault{{name: "cut-client c2", start: ms(1000), end: ms(2000)}},
			models.Pass, models.Error},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, build(ops, tc.lost, tc.faults), time.Second)
			assert.Equal(t, tc.leaseKept, verdictOf(r, "lease-kept"), r.Environment.Explanation)
			assert.Equal(t, tc.env, r.Environment.Result, r.Environment.Explanation)
			if tc.env == models.Error {
				assert.Contains(t, r.Environment.Explanation, "heard no answer to the keep-alives it went on sending for 2.59s")
			}
		})
	}
}

// An idle client's lease whose keep-alives stopped (a lock that releases
// without revoking its lease, as python-etcd3's does), and that the server
// ended a TTL after the last of them, ended on time: no machine let it
// lapse, and the environment takes no blame for it. The same lease ended
// before that keep-alive's TTL was out, or while the client went on
// renewing it, lapsed though renewed: the busy machine's (ERROR).
func TestAnIdleLeaseEndingOnTimeIsNoLapse(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	idle := []op{
		{client: "c1", op: A, call: 0, ret: ms(10), token: 10, lease: 0xa},
		{client: "c1", op: R, call: ms(20), ret: ms(30)},
		{client: "c2", op: A, call: ms(4000), ret: ms(4010), token: 12, lease: 0xb},
		{client: "c2", op: R, call: ms(4020), ret: ms(4030)},
	}
	loss := func(gone int64, renewals ...int64) []lost {
		l := lost{client: "c1", t: gone, aliveUntil: gone - ms(60), lease: 0xa, ttl: ms(1000), renewals: renewals}
		for _, r := range renewals {
			if r <= l.aliveUntil {
				l.renewedAt = r // the last keep-alive before its last sighting alive
			}
		}
		return []lost{l}
	}
	for _, tc := range []struct {
		name string
		lost []lost
		env  models.Result
	}{
		{"ended a TTL after its last keep-alive", loss(ms(1380), ms(10), ms(340)), models.Pass},
		{"ended before that keep-alive's TTL was out", loss(ms(1200), ms(10), ms(340)), models.Error},
		{"its client still renewing when it ended", loss(ms(1380), ms(10), ms(340), ms(1370)), models.Error},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, build(idle, tc.lost, nil), time.Second)
			assert.Equal(t, tc.env, r.Environment.Result, r.Environment.Explanation)
		})
	}
}

// A grant whose key rests on no lease — a persistent node, a key with no
// expiry — FAILs lease-kept at once, whatever else happened: a holder that
// dies keeps such a lock for ever. The same history without the sighting
// PASSes.
func TestAGrantOnNoLeaseFailsLeaseKept(t *testing.T) {
	ops := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 10, lease: 0xa},
		{client: "c1", op: C, call: 20, ret: 30, token: 10, value: val(0), accepted: yes},
		{client: "c1", op: R, call: 40, ret: 50},
	}
	evs := build(ops, nil, nil)
	r := mustCheck(t, evs, time.Second)
	assert.Equal(t, models.Pass, verdictOf(r, "lease-kept"))

	evs = append(evs, history.Event{Time: 60, Type: history.Observed, What: history.ObservedLeaseless, Client: "c1", Token: 10})
	r = mustCheck(t, evs, time.Second)
	kept := r.Safety[slices.IndexFunc(r.Safety, func(v models.Verdict) bool { return v.Check == "lease-kept" })]
	assert.Equal(t, models.Fail, kept.Result)
	assert.Contains(t, kept.Explanation, "c1's grant rests on no lease on the server")
	assert.NotEmpty(t, kept.Evidence, "the grant is the evidence")
}
