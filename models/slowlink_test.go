package models_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// A slow link — the holder's own, delaying every message — never starves
// a lease by itself: a keep-alive sent at s reaches the server at s plus
// the delay. A lock whose keep-alive, so delayed, arrived after the lease
// had ended (a TTL after the one before it arrived) let it go (FAIL); one
// whose keep-alives all arrived in time lost it to a server too slow to
// take them (the environment's, ERROR); a delay of another client's link
// excuses as any fault does, but cannot have reached c1's lease: a lapse
// the lock renewed through is then the machine's (the environment's
// ERROR).
func TestLeaseKeptSlowLink(t *testing.T) {
	ops := []op{
		{client: "c1", op: A, call: 0, ret: 10, token: 10, lease: 0xa},
		{client: "c1", op: C, call: 20, ret: 6000, token: 10, value: val(0), accepted: yes},
		{client: "c1", op: R, call: 6010, ret: 6020},
	}
	loss := func(gone, alive int64, renewals ...int64) []lost {
		return []lost{{client: "c1", t: gone, aliveUntil: alive, lease: 0xa, ttl: 3000, renewals: renewals,
			renewedAt: renewals[len(renewals)-1]}}
	}
	slow := []fault{{name: "delay-client c1 300ns", start: 15, end: 5900}}
	for _, tc := range []struct {
		name     string
		events   []history.Event
		want     models.Result
		env      models.Result
		contains string
	}{
		{"a keep-alive a TTL after the last answer arrives too late", build(ops, loss(3500, 3300, 0, 3150), slow),
			models.Fail, models.Pass, "delayed every message by 300ns each way"},
		{"keep-alives in time, the server slow to take them", build(ops, loss(4000, 3900, 0, 1900, 3800), slow),
			models.Pass, models.Error, ""},
		{"the lock stopped renewing", build(ops, loss(4100, 3900, 0, 400), slow), models.Fail, models.Pass, ""},
		{"another client's slow link excuses", build(ops, loss(3500, 3300, 0, 3150), []fault{{name: "delay-client c2 300ns", start: 15, end: 5900}}),
			models.Pass, models.Error, ""},
		{"no keep-alives recorded: the fault excuses", build(ops, []lost{{client: "c1", t: 3500, aliveUntil: 3300, lease: 0xa, ttl: 3000}}, slow),
			models.Pass, models.Pass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCheck(t, tc.events, time.Second)
			v := r.Safety[slices.IndexFunc(r.Safety, func(v models.Verdict) bool { return v.Check == "lease-kept" })]
			assert.Equal(t, tc.want, v.Result, v.Explanation)
			assert.Equal(t, tc.env, r.Environment.Result, r.Environment.Explanation)
			assert.Contains(t, v.Explanation, tc.contains)
		})
	}
}
