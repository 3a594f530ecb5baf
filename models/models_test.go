package models_test

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	A = history.Acquire
	R = history.Release
	C = history.CS
	P = models.Pass
	F = models.Fail
	N = models.NotApplicable
)

// expect is the verdict each check must give.
// kept, when empty, is PASS.
type expect struct{ counter, tokens, stale, validity, waiter, kept, mutex models.Result }

var cases = []struct {
	name   string
	ops    []op
	leases []lost
	faults []fault
	want   expect
}{
	{
		name: "two holders one after the other",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 10},
			{client: "c2", op: A, call: 5, ret: 60, token: 12}, // waits for c1
			{client: "c1", op: C, call: 20, ret: 30, token: 10, value: val(0), accepted: yes},
			{client: "c1", op: R, call: 40, ret: 50},
			{client: "c2", op: C, call: 70, ret: 80, token: 12, value: val(1), accepted: yes},
			{client: "c2", op: R, call: 90, ret: 100},
		},
		want: expect{counter: P, tokens: P, stale: P, validity: P, mutex: P},
	},
	{
		name: "double grant",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 10},
			{client: "c2", op: A, call: 20, ret: 30, token: 12},
			{client: "c1", op: R, call: 40, ret: 50},
			{client: "c2", op: R, call: 60, ret: 70},
		},
		want: expect{counter: N, tokens: P, stale: N, validity: F, mutex: F},
	},
	{
		name: "paused holder, unfenced: lost update",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 10},
			// c1 reads 0, is paused past its lease, then writes 1: accepted.
			{client: "c1", op: C, call: 20, ret: 500, token: 10, value: val(0), accepted: yes},
			{client: "c2", op: A, call: 30, ret: 300, token: 12},
			{client: "c2", op: C, call: 310, ret: 320, token: 12, value: val(0), accepted: yes},
			{client: "c2", op: R, call: 330, ret: 340},
			{client: "c1", op: R, call: 510, ret: 520},
		},
		leases: []lost{{client: "c1", t: 290, aliveUntil: 250}},
		faults: []fault{{name: "pause-client c1 at before-write", start: 25, end: 480}},
		want:   expect{counter: F, tokens: P, stale: P, validity: P, mutex: F},
	},
	{
		name: "paused holder, fenced: stale write rejected",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 10},
			{client: "c1", op: C, call: 20, ret: 500, token: 10, value: val(0), accepted: no, reason: "token 10 < 12"},
			{client: "c2", op: A, call: 30, ret: 300, token: 12},
			{client: "c2", op: C, call: 310, ret: 320, token: 12, value: val(0), accepted: yes},
			{client: "c2", op: R, call: 330, ret: 340},
			{client: "c1", op: R, call: 510, ret: 520},
		},
		leases: []lost{{client: "c1", t: 290, aliveUntil: 250}},
		faults: []fault{{name: "pause-client c1 at before-write", start: 25, end: 480}},
		want:   expect{counter: P, tokens: P, stale: P, validity: P, mutex: F},
	},
	{
		name: "info write may have landed (it did)",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 10},
			{client: "c1", op: C, call: 20, ret: 30, typ: history.Info, token: 10, value: val(0)}, // c1 dies here
			{client: "c2", op: A, call: 25, ret: 200, token: 12},
			{client: "c2", op: C, call: 210, ret: 220, token: 12, value: val(1), accepted: yes},
			{client: "c2", op: R, call: 230, ret: 240},
		},
		leases: []lost{{client: "c1", t: 190, aliveUntil: 150}},
		faults: []fault{{name: "pause-client c1 at before-write", start: 25, end: 200}},
		want:   expect{counter: P, tokens: P, stale: P, validity: P, mutex: P},
	},
	{
		name: "info write may have landed (it did not)",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 10},
			{client: "c1", op: C, call: 20, ret: -1, token: 10, value: val(0)}, // never heard back
			{client: "c2", op: A, call: 25, ret: 200, token: 12},
			{client: "c2", op: C, call: 210, ret: 220, token: 12, value: val(0), accepted: yes},
		},
		leases: []lost{{client: "c1", t: 190, aliveUntil: 150}},
		faults: []fault{{name: "pause-client c1 at before-write", start: 25, end: 200}},
		want:   expect{counter: P, tokens: P, stale: P, validity: P, mutex: P},
	},
	{
		name: "info write cannot explain a jump",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 10},
			{client: "c1", op: C, call: 20, ret: 30, typ: history.Info, token: 10, value: val(0)},
			{client: "c2", op: A, call: 25, ret: 200, token: 12},
			{client: "c2", op: C, call: 210, ret: 220, token: 12, value: val(2), accepted: yes},
		},
		leases: []lost{{client: "c1", t: 190, aliveUntil: 150}},
		faults: []fault{{name: "pause-client c1 at before-write", start: 25, end: 200}},
		want:   expect{counter: F, tokens: P, stale: P, validity: P, mutex: P},
	},
	{
		name: "info acquire that never took",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 50, typ: history.Info},
			{client: "c2", op: A, call: 10, ret: 20, token: 12},
			{client: "c2", op: R, call: 30, ret: 40},
		},
		want: expect{counter: N, tokens: P, stale: N, validity: P, mutex: P},
	},
	{
		name: "failed acquire is ignored",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 10},
			{client: "c2", op: A, call: 15, ret: 20, typ: history.Fail},
			{client: "c1", op: R, call: 30, ret: 40},
		},
		want: expect{counter: N, tokens: P, stale: N, validity: P, mutex: P},
	},
	{
		name: "tokens go backwards",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 12},
			{client: "c1", op: R, call: 20, ret: 30},
			{client: "c2", op: A, call: 40, ret: 50, token: 10},
			{client: "c2", op: R, call: 60, ret: 70},
		},
		want: expect{counter: N, tokens: F, stale: N, validity: P, mutex: P},
	},
	{
		name: "two grants share a token",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 10},
			{client: "c1", op: R, call: 20, ret: 30},
			{client: "c2", op: A, call: 40, ret: 50, token: 10},
			{client: "c2", op: R, call: 60, ret: 70},
		},
		want: expect{counter: N, tokens: F, stale: N, validity: P, mutex: P},
	},
	{
		name: "grant while the previous lease was still alive",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 10},
			{client: "c2", op: A, call: 20, ret: 100, token: 12},
			{client: "c1", op: R, call: 300, ret: 310},
			{client: "c2", op: R, call: 320, ret: 330},
		},
		leases: []lost{{client: "c1", t: 250, aliveUntil: 200}}, // alive until 200 > c2's grant at 100
		// c1's lease also ended under it with no fault: the lock let it lapse.
		want: expect{counter: N, tokens: P, stale: N, validity: F, kept: F, mutex: F},
	},
	// Holes a checker once let through: each history must FAIL.
	{
		name: "grant while the holder never released and its lease never ended",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 2, lease: 0xa},
			{client: "c1", op: C, call: 20, ret: 30, token: 2, value: val(0), accepted: yes, writeAt: 25},
			{client: "c2", op: A, call: 40, ret: 50, token: 4, lease: 0xb},
			{client: "c2", op: C, call: 60, ret: 70, token: 4, value: val(1), accepted: yes, writeAt: 65},
			{client: "c2", op: R, call: 80, ret: 90},
		},
		want: expect{counter: P, tokens: P, stale: P, validity: F, waiter: N, mutex: F},
	},
	{
		// etcd issue 22082: c1's release of t2 took effect unanswered; c1
		// was granted t4 under the same key name and retried the release
		// of t2, which deleted t4's key; c2 was granted beside c1.
		name: "a retried release of an older grant ends the newer one",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 2, lease: 0xa},
			{client: "c1", op: R, call: 20, ret: 30, typ: history.Info, token: 2},
			{client: "c1", op: A, call: 40, ret: 50, token: 4, lease: 0xa},
			{client: "c2", op: A, call: 45, ret: 100, token: 5, lease: 0xb},
			{client: "c1", op: R, call: 60, ret: 70, token: 2},
			{client: "c1", op: C, call: 80, ret: 90, token: 4, value: val(0), accepted: yes, writeAt: 85},
			{client: "c1", op: R, call: 110, ret: 120, typ: history.Fail, token: 4},
			{client: "c2", op: C, call: 130, ret: 140, token: 5, value: val(1), accepted: yes, writeAt: 135},
			{client: "c2", op: R, call: 150, ret: 160, token: 5},
		},
		want: expect{counter: P, tokens: P, stale: P, validity: F, waiter: N, mutex: F},
	},
	{
		name: "a retried release the lock refuses ends nothing",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 2, lease: 0xa},
			{client: "c1", op: R, call: 20, ret: 30, typ: history.Info, token: 2},
			{client: "c1", op: A, call: 40, ret: 50, token: 4, lease: 0xa},
			{client: "c2", op: A, call: 45, ret: 130, token: 5, lease: 0xb},
			{client: "c1", op: R, call: 60, ret: 70, typ: history.Fail, token: 2},
			{client: "c1", op: C, call: 80, ret: 90, token: 4, value: val(0), accepted: yes, writeAt: 85},
			{client: "c1", op: R, call: 110, ret: 120, token: 4},
			{client: "c2", op: C, call: 140, ret: 150, token: 5, value: val(1), accepted: yes, writeAt: 145},
			{client: "c2", op: R, call: 160, ret: 170, token: 5},
		},
		want: expect{counter: P, tokens: P, stale: P, validity: P, waiter: N, mutex: P},
	},
	{
		name: "grant on a lease the server had already ended",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 2, lease: 0xa},
			{client: "c1", op: R, call: 20, ret: 30},
			{client: "c2", op: A, call: 100, ret: 110, token: 4, lease: 0xb},
			{client: "c2", op: R, call: 120, ret: 130},
		},
		leases: []lost{{client: "c2", t: 50, aliveUntil: 40, lease: 0xb}},
		want:   expect{counter: N, tokens: P, stale: N, validity: F, waiter: P, mutex: P},
	},
	{
		name: "waiter granted after its lease ended while it waited",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 2, lease: 0xa},
			{client: "c2", op: A, call: 5, ret: 200, token: 3, lease: 0xb},
			{client: "c1", op: R, call: 150, ret: 160},
			{client: "c2", op: R, call: 210, ret: 220},
		},
		leases: []lost{{client: "c2", t: 100, aliveUntil: 90, lease: 0xb}},
		want:   expect{counter: N, tokens: P, stale: N, validity: P, waiter: F, mutex: P},
	},
	{
		name: "stale write lands after a newer one inside overlapping sections",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 10, lease: 0xa},
			{client: "c2", op: A, call: 30, ret: 300, token: 12, lease: 0xb},
			{client: "c2", op: C, call: 310, ret: 320, token: 12, value: val(0), accepted: yes, writeAt: 315},
			// c1 entered before c2's write and read after it: the counter
			// looks fine, but its write with token 10 followed c2's with 12.
			{client: "c1", op: C, call: 305, ret: 500, token: 10, value: val(1), accepted: yes, writeAt: 450},
			{client: "c2", op: R, call: 330, ret: 340},
			{client: "c1", op: R, call: 510, ret: 520},
		},
		leases: []lost{{client: "c1", t: 290, aliveUntil: 250, lease: 0xa}},
		faults: []fault{{name: "pause-client c1 at after-acquire", start: 15, end: 300}},
		want:   expect{counter: P, tokens: P, stale: F, validity: P, waiter: P, mutex: F},
	},
	{
		// Seen with queue in the random scenario: granted at once by the
		// server, the answer held by a cut link until after the lease lapsed.
		name: "grant answered late through a cut link is not an expired waiter",
		ops: []op{
			{client: "c2", op: A, call: 0, ret: 2000, token: 3, lease: 0xb},
			{client: "c3", op: A, call: 1500, ret: 1600, token: 9, lease: 0xc},
			{client: "c3", op: R, call: 1700, ret: 1710},
			{client: "c2", op: R, call: 2100, ret: 2110, typ: history.Fail},
		},
		leases: []lost{{client: "c2", t: 1200, aliveUntil: 1100, lease: 0xb}},
		faults: []fault{{name: "cut-client c2", start: 5, end: 1990}},
		want:   expect{counter: N, tokens: P, stale: N, validity: P, waiter: P, mutex: P},
	},
	{
		// The etcd-11456 bug with the waiter's lease ended by a cut: c1
		// held the lock the whole time c2's lease lived, so the grant was
		// decided after the lease ended; the cut excuses nothing.
		name: "waiter cut until its lease lapsed, granted after the holder released",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 2, lease: 0xa},
			{client: "c2", op: A, call: 20, ret: 1600, token: 3, lease: 0xb},
			{client: "c1", op: R, call: 1500, ret: 1510},
			{client: "c2", op: R, call: 1700, ret: 1710, typ: history.Fail},
		},
		leases: []lost{{client: "c2", t: 1200, aliveUntil: 1100, lease: 0xb}},
		faults: []fault{{name: "expire-lease c2 (lapse)", start: 30, end: 1400}},
		want:   expect{counter: N, tokens: P, stale: N, validity: P, waiter: F, mutex: P},
	},
	{
		name: "waiter whose lease ended is told so",
		ops: []op{
			{client: "c1", op: A, call: 0, ret: 10, token: 2, lease: 0xa},
			{client: "c2", op: A, call: 5, ret: 170, typ: history.Fail, lease: 0xb},
			{client: "c1", op: R, call: 150, ret: 160},
		},
		leases: []lost{{client: "c2", t: 100, aliveUntil: 90, lease: 0xb}},
		want:   expect{counter: N, tokens: P, stale: N, validity: P, waiter: N, mutex: P},
	},
}

func TestHandWrittenHistories(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			events := build(tc.ops, tc.leases, tc.faults)
			report := mustCheck(t, events, 10*time.Second)
			got := map[string]models.Result{"mutex": report.Belief.Result}
			for _, v := range report.Safety {
				got[v.Check] = v.Result
			}
			waiter := tc.want.waiter
			if waiter == "" {
				waiter = N
				if len(tc.leases) > 0 {
					waiter = P
				}
			}
			want := map[string]models.Result{
				"counter": tc.want.counter, "tokens": tc.want.tokens, "stale-writes": tc.want.stale,
				"validity": tc.want.validity, "expired-waiter": waiter, "lease-kept": cmp.Or(tc.want.kept, P),
				"deadline":  N,                // these histories record no deadline
				"told-lost": N,                // nor a grant's Lost
				"release":   released(events), // nor a release that left its grant held
				"mutex":     tc.want.mutex,
			}
			assert.Equal(t, want, got)
			for _, v := range append(report.Safety, report.Belief) {
				assert.NotEmpty(t, v.Explanation, v.Check)
				if v.Result == models.Fail {
					assert.NotEmpty(t, v.Evidence, "%s FAIL must show its evidence", v.Check)
				}
			}
		})
	}
}

func TestEvidenceNamesTheLostUpdate(t *testing.T) {
	events := build(cases[2].ops, cases[2].leases, nil)
	v := models.CheckCounter(history.Pair(events), events, time.Second)
	require.Equal(t, models.Fail, v.Result)
	assert.Contains(t, v.Explanation, "both read 0 and both wrote 1")
	require.Len(t, v.Evidence, 2)
	assert.Contains(t, v.Evidence[0], "c1 cs → ok read=0 token=10 write accepted")
	assert.Contains(t, v.Evidence[1], "c2 cs → ok read=0 token=12 write accepted")
}

func TestWorst(t *testing.T) {
	assert.Equal(t, models.Fail, models.Worst(models.Pass, models.Unknown, models.Fail, models.NotApplicable))
	assert.Equal(t, models.Unknown, models.Worst(models.Pass, models.Unknown))
	assert.Equal(t, models.Pass, models.Worst(models.Pass, models.NotApplicable))
	assert.Equal(t, models.NotApplicable, models.Worst())
}

// A timeout the checker cannot meet gives UNKNOWN, never PASS.
func TestTimeoutIsUnknownNeverPass(t *testing.T) {
	// Many concurrent info critical sections make the search space explode.
	var ops []op
	for i := range 40 {
		ops = append(ops, op{client: "c" + string(rune('a'+i%26)) + string(rune('a'+i/26)), op: C,
			call: int64(i), ret: -1, token: 10, value: val(int64(i % 3))})
	}
	ops = append(ops, op{client: "z", op: C, call: 100, ret: 110, token: 10, value: val(1000), accepted: yes})
	events := build(ops, nil, nil)
	v := models.CheckCounter(history.Pair(events), events, time.Nanosecond)
	assert.Equal(t, models.Unknown, v.Result)
	assert.Contains(t, v.Explanation, "not decided")
	assert.NotEqual(t, models.Pass, mustCheck(t, events, time.Nanosecond).Result())
}

func TestVisualizationOfAFailure(t *testing.T) {
	events := build(cases[2].ops, cases[2].leases, []fault{{name: "pause-client c1", start: 25, end: 480}})
	v := models.CheckCounter(history.Pair(events), events, time.Second)
	require.Equal(t, models.Fail, v.Result)
	require.True(t, v.HasVisualization())
	path := filepath.Join(t.TempDir(), "counter.html")
	require.NoError(t, v.WriteVisualization(path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	html := string(b)
	for _, want := range []string{"c1 cs", "c2 cs", "counter = ", "pause-client c1", "c1 lease lost"} {
		assert.Contains(t, html, want)
	}
	assert.False(t, models.CheckTokens(history.Pair(events), events).HasVisualization())
}

func TestCheckRefusesAnInvalidHistory(t *testing.T) {
	events := []history.Event{
		{Time: 1, Type: history.Ok, ID: 1, Client: "c1", Op: history.Acquire},
		{Time: 2, Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire},
	}
	_, err := models.Check(history.Header{}, events, time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "event 1: ok of operation 1 comes before its invocation")
}

// Seen with ttl-poll in the random scenario (seed 13): c1's acquire was
// committed just as its member m1 was isolated; the answer waited for the
// heal, and meanwhile c1's lease lapsed. A grant stale on arrival — the
// belief finding — not a lock that granted on an ended lease. The same
// history with c1 on a member the fault did not touch is an expired waiter.
func TestExpiredWaiterExcusesAnAnswerHeldByItsMembersIsolation(t *testing.T) {
	ops := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 2, lease: 0xa},
		{client: "c1", op: R, call: 20, ret: 30, token: 2},
		{client: "c1", op: A, call: 40, ret: 2000, token: 3, lease: 0xa},
		{client: "c2", op: A, call: 50, ret: 1950, token: 5, lease: 0xb},
		{client: "c2", op: R, call: 1960, ret: 1970, token: 5},
	}
	leases := []lost{{client: "c1", t: 1500, aliveUntil: 1400, lease: 0xa}}
	for _, tc := range []struct {
		fault, target, member string
		want                  models.Result
	}{
		{"isolate-member m1", "m1", "m1", models.Pass},
		{"isolate-leader", "m1", "m1", models.Pass},
		{"partition m1 | m2 m3", "", "m1", models.Pass},
		{"isolate-member m3", "m3", "m1", models.Fail},
		{"partition m1 m2 | m3", "", "m1", models.Fail},
	} {
		evs := build(ops, leases, nil)
		evs = append([]history.Event{{Time: 0, Type: history.Observed, What: history.ObservedConnected, Client: "c1", Member: tc.member}}, evs...)
		evs = slices.Insert(evs, slices.IndexFunc(evs, func(e history.Event) bool { return e.Time > 45 }),
			history.Event{Time: 45, Type: history.FaultStart, ID: 1, Fault: tc.fault})
		evs = slices.Insert(evs, slices.IndexFunc(evs, func(e history.Event) bool { return e.Time > 1900 }),
			history.Event{Time: 1900, Type: history.FaultEnd, ID: 1, Fault: tc.fault, Target: tc.target})
		assert.Equal(t, tc.want, verdictOf(mustCheck(t, evs, time.Second), "expired-waiter"), tc.fault)
	}
}

// The slow-holder finding (and the environment's): c1's lease ends under it in the middle of its
// critical section, with nothing on the run to explain it. Excused by a
// fault open at any moment from the acquire to the loss (or ended less than
// the lease's TTL before the acquire), by a stall of the lab itself, or by a
// keep-alive c1's client sent within one TTL of the lease's last sighting;
// not a finding at all when the loss came after c1 began to release. A
// stall or a renewal in time is the environment's doing (ERROR); a fault,
// the schedule's; nothing, the lock's.
func TestLeaseKept(t *testing.T) {
	ops := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 10, lease: 0xa},
		{client: "c2", op: A, call: 20, ret: 1500, token: 12, lease: 0xb},
		{client: "c2", op: C, call: 1510, ret: 1520, token: 12, value: val(0), accepted: yes},
		{client: "c1", op: C, call: 30, ret: 2500, token: 10, value: val(0), accepted: no, reason: "stale token"},
		{client: "c1", op: R, call: 2510, ret: 2520, typ: history.Fail},
		{client: "c2", op: R, call: 2530, ret: 2540},
	}
	leases := []lost{{client: "c1", t: 1400, aliveUntil: 1300, lease: 0xa}}
	stall := func(from, to int64) []history.Event {
		evs := build(ops, leases, nil)
		at := slices.IndexFunc(evs, func(e history.Event) bool { return e.Time > to })
		return slices.Insert(evs, at, history.Event{Time: to, Type: history.Observed, What: history.ObservedStalled, StalledFrom: from})
	}
	for _, tc := range []struct {
		name   string
		events []history.Event
		want   models.Result
		env    models.Result // the environment took the lease (ERROR), or not
	}{
		{"nothing explains the lapse", build(ops, leases, nil), models.Fail, models.Pass},
		{"a fault that may reach every client was open", build(ops, leases, []fault{{name: "partition m1 | m2 m3", start: 5, end: 50}}), models.Pass, models.Pass},
		// Another client's slow link cannot have starved c1's lease: a lease
		// never renewed lapses all the same.
		{"only another client's fault was open", build(ops, leases, []fault{{name: "delay-client c3", start: 5, end: 50}}), models.Fail, models.Pass},
		{"a fault after the loss", build(ops, leases, []fault{{name: "cut-client c1", start: 1450, end: 1700}}), models.Fail, models.Pass},
		{"the lab stood still", stall(900, 1350), models.Pass, models.Error},
		{"the lab stood still after the loss", stall(1450, 1700), models.Fail, models.Pass},
		{"the lease ended after the release began", build(ops, []lost{{client: "c1", t: 2600, aliveUntil: 2400, lease: 0xa}}, nil), models.Pass, models.Pass},
		{"the lock kept renewing: a keep-alive within a TTL of the last sighting",
			build(ops, []lost{{client: "c1", t: 1400, aliveUntil: 1300, lease: 0xa, renewedAt: 400, ttl: 1000}}, nil), models.Pass, models.Error},
		{"the last keep-alive came more than a TTL before the last sighting",
			build(ops, []lost{{client: "c1", t: 1400, aliveUntil: 1300, lease: 0xa, renewedAt: 250, ttl: 1000}}, nil), models.Fail, models.Pass},
		{"a keep-alive, but the lease's TTL is not known",
			build(ops, []lost{{client: "c1", t: 1400, aliveUntil: 1300, lease: 0xa, renewedAt: 1200}}, nil), models.Fail, models.Pass},
		{"no keep-alive at all", build(ops, []lost{{client: "c1", t: 1400, aliveUntil: 1300, lease: 0xa, ttl: 1000}}, nil), models.Fail, models.Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, tc.events, time.Second)
			assert.Equal(t, tc.want, verdictOf(r, "lease-kept"))
			assert.Equal(t, tc.env, r.Environment.Result, r.Environment.Explanation)
			if tc.env == models.Error {
				assert.Contains(t, r.Environment.Explanation, "The environment let a renewed lease lapse: c1's lease ended")
				assert.Len(t, r.Environment.Evidence, 2)
				assert.Contains(t, r.Verdicts(), r.Environment, "listed beside the checks")
			} else {
				assert.NotContains(t, r.Verdicts(), r.Environment)
			}
			if tc.want == models.Fail {
				v := r.Safety[slices.IndexFunc(r.Safety, func(v models.Verdict) bool { return v.Check == "lease-kept" })]
				assert.Contains(t, v.Explanation, "c1's lease")
				assert.Len(t, v.Evidence, 2)
				assert.Equal(t, models.Pass, verdictOf(r, "validity"), "the lock never granted while c1's lease lived")
			}
		})
	}
}

// A blip — a fault that held the holder's own link for less than the lease
// could live unrenewed — excuses a lost lease only if the link was held a
// TTL past the client's last keep-alive before it: otherwise the lease was
// alive when the link came back, and a lock that renews it after the heal
// keeps it. The keep-alives the history lists tell which. A client that
// heard no answer to its keep-alives for a TTL across the blip could not
// know its lease lived: its lapse is the environment's (ERROR), not the
// lock's.
func TestLeaseKeptBlips(t *testing.T) {
	ops := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 10, lease: 0xa},
		{client: "c1", op: C, call: 20, ret: 3000, token: 10, value: val(0), accepted: yes},
		{client: "c1", op: R, call: 3010, ret: 3020},
	}
	loss := func(renewals ...int64) []lost {
		l := lost{client: "c1", t: 1500, aliveUntil: 1450, lease: 0xa, ttl: 1000, renewals: renewals}
		if len(renewals) > 0 {
			l.renewedAt = renewals[len(renewals)-1]
		}
		return []lost{l}
	}
	blip := []fault{{name: "cut-client c1", start: 100, end: 400}}
	intoTheBlip := func(answers ...int64) []lost {
		return []lost{{client: "c1", t: 1500, aliveUntil: 1200, lease: 0xa, ttl: 1000, renewedAt: 300,
			renewals: []int64{90, 300}, keptAlive: answers}}
	}
	for _, tc := range []struct {
		name   string
		events []history.Event
		want   models.Result
		env    models.Result // PASS unless said
	}{
		{"renewal stopped after a blip", build(ops, loss(50, 90), blip), models.Fail, ""},
		{"into the blip, answered in time", build(ops, intoTheBlip(60, 95, 420), blip), models.Fail, ""},
		{"into the blip, no answer for a TTL", build(ops, intoTheBlip(60, 1100), blip), models.Pass, models.Error},
		{"into the blip, no answer since", build(ops, intoTheBlip(60), blip), models.Fail, ""},
		{"kept renewing after the blip", build(ops, loss(90, 400, 650, 900), blip), models.Pass, models.Error},
		// The last keep-alive was sent into the blip and delivered when
		// it healed (the lease lived a TTL past that): nothing after it.
		{"renewed only into the blip", build(ops, []lost{{client: "c1", t: 1500, aliveUntil: 1200, lease: 0xa, ttl: 1000,
			renewedAt: 300, renewals: []int64{90, 300}}}, blip), models.Fail, ""},
		// The last keep-alive was sent into the blip and never reached the
		// server (the lease ended within a TTL of the link's return, which a
		// delivered one rules out): the client gave up on it and sent
		// nothing after the link came back, while the lease still lived.
		{"renewed into the blip, the keep-alive given up", build(ops, []lost{{client: "c1", t: 1300, aliveUntil: 1200, lease: 0xa, ttl: 1000,
			renewedAt: 300, renewals: []int64{90, 300}}}, blip), models.Fail, ""},
		{"a cut long enough to starve the lease", build(ops, loss(50, 90), []fault{{name: "cut-client c1", start: 100, end: 1200}}), models.Pass, ""},
		// The link came back 20 ms before the lease's end: no renewer can
		// be held to renew in that time.
		{"a cut that left the lease too little to renew", build(ops, loss(50, 90), []fault{{name: "cut-client c1", start: 100, end: 1070}}), models.Pass, ""},
		{"keep-alives not recorded: any fault excuses", build(ops, loss(), blip), models.Pass, ""},
		{"a member's fault still excuses", build(ops, loss(50, 90), []fault{{name: "isolate-member m1", start: 100, end: 400}}), models.Pass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, tc.events, time.Second)
			v := r.Safety[slices.IndexFunc(r.Safety, func(v models.Verdict) bool { return v.Check == "lease-kept" })]
			assert.Equal(t, tc.want, v.Result, v.Explanation)
			if tc.env == models.Error {
				assert.Equal(t, models.Error, r.Environment.Result)
			} else {
				assert.NotEqual(t, models.Error, r.Environment.Result, r.Environment.Explanation)
			}
			if strings.Contains(tc.name, "no answer for a TTL") {
				assert.Contains(t, r.Environment.Explanation, "heard no answer to its keep-alives for")
			}
			if tc.name == "renewal stopped after a blip" {
				assert.Contains(t, v.Explanation, "A fault held c1's link from")
				assert.Contains(t, v.Explanation, "but too briefly to starve the lease")
				assert.Contains(t, v.Explanation, "it sent none after the link came back")
			}
		})
	}
}

// A fault's excuse reaches one lease TTL past its end: a client that
// reconnects after the fault may be granted before its keep-alives flow
// again, on a lease the fault kept from being renewed. Past that shadow, a
// lapse is the lock's.
func TestLeaseKeptFaultShadow(t *testing.T) {
	ops := []op{
		{client: "c1", op: A, call: 100, ret: 110, token: 10, lease: 0xa},
		{client: "c1", op: C, call: 120, ret: 1500, token: 10, value: val(0), accepted: no, reason: "stale token"},
		{client: "c1", op: R, call: 1510, ret: 1520, typ: history.Fail},
	}
	restart := []fault{{name: "kill-member m2", start: 5, end: 60}}
	for _, tc := range []struct {
		name string
		ttl  int64
		want models.Result
	}{
		{"the acquire came within the lease's TTL of the fault's end", 1000, models.Pass},
		{"the acquire came more than the lease's TTL after it", 30, models.Fail},
		{"the lease's TTL is not known", 0, models.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := build(ops, []lost{{client: "c1", t: 1400, aliveUntil: 1300, lease: 0xa, ttl: tc.ttl}}, restart)
			assert.Equal(t, tc.want, verdictOf(mustCheck(t, evs, time.Second), "lease-kept"))
		})
	}
}

// A token granted again to the same client: after a release that returned
// ok it is a new grant with an old token (FAIL); with no release between,
// the client was granted its own key again (not a failure), and a history
// whose grants all carry one token tested no token order (N/A, never a
// PASS that says tokens grow).
func TestTokensGrantedAgain(t *testing.T) {
	acq := func(client string, call, ret, token int64) op {
		return op{client: client, op: history.Acquire, call: call, ret: ret, token: token}
	}
	rel := func(client string, call, ret, token int64, typ history.Type) op {
		return op{client: client, op: history.Release, call: call, ret: ret, token: token, typ: typ}
	}
	check := func(ops ...op) models.Verdict {
		evs := build(ops, nil, nil)
		return models.CheckTokens(history.Pair(evs), evs)
	}

	v := check(acq("c1", 0, 1, 42), rel("c1", 2, 3, 42, history.Ok), acq("c1", 4, 5, 42))
	assert.Equal(t, models.Fail, v.Result, v.Explanation)
	assert.Contains(t, v.Explanation, "granted token 42 again after it had released it")

	v = check(acq("c1", 0, 1, 42), rel("c1", 2, 3, 42, history.Fail), acq("c1", 4, 5, 42), rel("c1", 6, 7, 42, history.Fail))
	assert.Equal(t, models.NotApplicable, v.Result, v.Explanation)
	assert.Contains(t, v.Explanation, "All 2 grants carry the one token 42")

	v = check(acq("c1", 0, 1, 42), rel("c1", 2, 3, 42, history.Ok), acq("c2", 4, 5, 43))
	assert.Equal(t, models.Pass, v.Result, v.Explanation)
	assert.Contains(t, v.Explanation, "(2 distinct)")

	// Before any grant (the live lab's page at its start) the check has
	// nothing to judge yet; grants without a token are a lock that gives none.
	v = check()
	assert.Equal(t, models.NotApplicable, v.Result)
	assert.Equal(t, "No grant yet: token order is not judged until the lock grants.", v.Explanation)
	v = check(acq("c1", 0, 1, 0))
	assert.Contains(t, v.Explanation, "this lock gives none")
}

// A grant whose token is not its key's create revision breaks lock.Grant's
// contract: the tokens check fails it and says how, in each of the three
// ways the lab can see it; the grants of other clients do not match it.
func TestTokensOfBadGrantsFail(t *testing.T) {
	ops := []op{
		{client: "c1", op: history.Acquire, call: 0, ret: 1, token: 1234},
		{client: "c1", op: history.Release, call: 2, ret: 3, token: 1234},
		{client: "c2", op: history.Acquire, call: 4, ret: 5, token: 1240},
	}
	for _, c := range []struct {
		bad  history.Event
		want string
	}{
		{history.Event{KeyRevision: 1187}, `c1's Grant.Token 1234 is not the create revision 1187 of its Grant.Key "k"`},
		{history.Event{}, `c1's Grant.Key "k" did not exist at revision 1234, its Grant.Token`},
		{history.Event{TokenAhead: true}, "c1's Grant.Token 1234 is a revision the server had not reached"},
	} {
		bad := c.bad
		bad.Time, bad.Type, bad.What, bad.Client, bad.Token, bad.Key = 5, history.Observed, history.ObservedBadToken, "c1", 1234, "k"
		evs := append(build(ops, nil, nil), bad)
		require.NoError(t, history.Validate(evs))
		v := models.CheckTokens(history.Pair(evs), evs)
		assert.Equal(t, models.Fail, v.Result, v.Explanation)
		assert.Contains(t, v.Explanation, c.want)
		assert.Contains(t, v.Explanation, "must leave Key empty")
	}
	other := history.Event{Time: 5, Type: history.Observed, What: history.ObservedBadToken, Client: "c2", Token: 1234, Key: "k"}
	evs := append(build(ops, nil, nil), other)
	v := models.CheckTokens(history.Pair(evs), evs)
	assert.Equal(t, models.Pass, v.Result, "c2 was never granted 1234: %s", v.Explanation)
}

// The minimum progress counts releases that returned ok and the clients
// ever granted: a lock whose releases all fail, or that starves a client
// where all contend, has not shown what the scenario needs.
func TestProgressCountsReleasesAndClients(t *testing.T) {
	ops := []op{
		{client: "c1", op: history.Acquire, call: 0, ret: 1, token: 5},
		{client: "c1", op: history.Release, call: 2, ret: 3, token: 5, typ: history.Fail},
		{client: "c2", op: history.Acquire, call: 0, ret: -1},
	}
	events := build(ops, nil, nil)
	v := models.CheckProgress(history.Pair(events), events, &history.Minimum{Grants: 1, Releases: 1, Clients: 2})
	assert.Equal(t, models.Fail, v.Result)
	assert.Contains(t, v.Explanation, "0 of 1 releases returned ok")
	assert.Contains(t, v.Explanation, "1 of 2 clients were ever granted (the others starved)")
	v = models.CheckProgress(history.Pair(events), events, &history.Minimum{Grants: 1})
	assert.Equal(t, models.Pass, v.Result, "nothing more asked: %s", v.Explanation)
}

// released is the release check's verdict on a history in which no
// release left its grant held: PASS once a release answered released.
func released(events []history.Event) models.Result {
	for _, op := range history.Pair(events) {
		if op.Op == history.Release && op.Type == history.Ok {
			return models.Pass
		}
	}
	return models.NotApplicable
}

// A release that answered released while the server still held its grant
// (an unlock on another session) FAILs the release check, naming the
// release; the same history without that sighting passes, and one whose
// releases all failed is not judged.
func TestAReleaseThatFreesNothingFails(t *testing.T) {
	events := build([]op{
		{client: "c1", op: history.Acquire, call: 0, ret: 1, token: 7},
		{client: "c1", op: history.Release, call: 2, ret: 3, token: 7},
	}, nil, nil)
	v := models.CheckRelease(history.Pair(events), events)
	assert.Equal(t, models.Pass, v.Result, v.Explanation)

	kept := append(slices.Clone(events), history.Event{Time: 4, Type: history.Observed, What: history.ObservedReleaseKept, Client: "c1", Token: 7})
	require.NoError(t, history.Validate(kept))
	v = models.CheckRelease(history.Pair(kept), kept)
	assert.Equal(t, models.Fail, v.Result)
	assert.Contains(t, v.Explanation, "c1's release answered that it released its grant (token 7)")
	assert.Len(t, v.Evidence, 2, "the release, and what the server showed")
	assert.NotEmpty(t, models.Remedy("release"))

	failed := build([]op{
		{client: "c1", op: history.Acquire, call: 0, ret: 1, token: 7},
		{client: "c1", op: history.Release, call: 2, ret: 3, token: 7, typ: history.Fail},
	}, nil, nil)
	assert.Equal(t, models.NotApplicable, models.CheckRelease(history.Pair(failed), failed).Result)
}
