package models_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// A lock that gives up a lease the server still keeps (its release says
// "not held") because its client heard no answer to the keep-alives it
// went on sending for a TTL gave it up rightly, on a machine too busy to
// answer in time: the environment's ERROR, so that what went otherwise
// than the script is not held against the lock. One whose keep-alives
// were answered all along gave up a lease it had, and one whose link a
// fault held was starved by the lesson, not the machine: neither is
// excused.
func TestALeaseGivenUpUnheardIsTheEnvironments(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	ops := []op{
		{client: "c1", op: A, call: 0, ret: ms(10), token: 10, lease: 0xa},
		{client: "c1", op: C, call: ms(20), ret: ms(30), token: 10, value: val(0), accepted: yes},
		{client: "c1", op: R, call: ms(2000), ret: ms(2010), typ: history.Fail},
	}
	kept := []int64{ms(10), ms(343), ms(676), ms(1010), ms(1510)}
	for _, tc := range []struct {
		name     string
		renewals []int64
		answers  []int64
		faults   []fault
		unheard  string // "": the environment is not blamed
	}{
		{"unanswered while it kept asking", kept, []int64{ms(20), ms(350), ms(680)}, nil, "1.33s"},
		{"answered all along", kept, []int64{ms(20), ms(350), ms(680), ms(1015), ms(1515)}, nil, ""},
		{"its own link cut", kept, []int64{ms(20), ms(350), ms(680)},
			[]fault{{name: "cut-client c1", start: ms(700), end: ms(1900)}}, ""},
		{"another client's link cut", kept, []int64{ms(20), ms(350), ms(680)},
			[]fault{{name: "cut-client c2", start: ms(700), end: ms(1900)}}, "1.33s"},
		// etcd's client at a one-second TTL: one keep-alive half a second
		// after its last answer, whose answer came a TTL after that one.
		{"one keep-alive, answered a TTL late", []int64{ms(10), ms(510)}, []int64{ms(20), ms(1030)}, nil, "1.01s"},
		// No keep-alive of its answered before the answers were held up:
		// the grant's answer is the last word that the lease lived.
		{"only the grant answered in time", []int64{ms(10), ms(11), ms(510), ms(1010), ms(1510)}, []int64{ms(10), ms(2005)},
			nil, "2s"},
		// A lock that gave up at its first unanswered keep-alive and
		// closed its stream: no late answer says the server was slow.
		{"gave up at its first unanswered keep-alive", []int64{ms(10), ms(343)}, []int64{ms(20)}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := build(ops, nil, tc.faults)
			evs = append(evs, history.Event{Time: ms(2010), Type: history.Observed, What: history.ObservedSaidEnded,
				Client: "c1", Lease: 0xa, AliveUntil: ms(2005), LeaseTTL: ms(1000), RenewedAt: tc.renewals[len(tc.renewals)-1],
				Renewals: tc.renewals, KeptAlive: tc.answers})
			r := mustCheck(t, evs, time.Second)
			if tc.unheard == "" {
				assert.Equal(t, models.Pass, r.Environment.Result, r.Environment.Explanation)
				return
			}
			assert.Equal(t, models.Error, r.Environment.Result, r.Environment.Explanation)
			assert.Contains(t, r.Environment.Explanation, "c1's lock gave its lease up at 2.01s: its client heard no "+
				"answer to the keep-alives it went on sending for "+tc.unheard+" (TTL 1s)")
		})
	}
}
