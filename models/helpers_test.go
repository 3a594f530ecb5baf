package models_test

import (
	"slices"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// tb is what mustCheck needs of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// mustCheck runs models.Check on a history that must be valid.
func mustCheck(t tb, events []history.Event, timeout time.Duration) models.Report {
	t.Helper()
	r, err := models.Check(history.Header{}, events, timeout)
	if err != nil {
		t.Fatalf("invalid history: %v", err)
	}
	return r
}

// op is one operation of a hand-written history. ret < 0 means the client
// never heard back (no completion event at all).
type op struct {
	client    string
	op        history.Op
	call, ret int64
	typ       history.Type // Ok when empty
	token     int64
	lease     int64 // acquire: the lease the grant rests on
	value     *int64
	accepted  *bool
	reason    string
	writeAt   int64 // cs: when the write was sent
}

func val(v int64) *int64 { return &v }

var (
	yes = func() *bool { b := true; return &b }()
	no  = func() *bool { b := false; return &b }()
)

// lost is a lease-lost event: observed at t, alive until aliveUntil.
type lost struct {
	client        string
	t, aliveUntil int64
	lease         int64
	renewedAt     int64 // the client's last keep-alive for it (0: none seen)
	ttl           int64 // the TTL granted (0: not known)
	renewals      []int64
	keptAlive     []int64 // the answers to its keep-alives the client received
	revokedAt     int64   // the client's own revoke of it, answered (0: none)
}

// fault is a fault window.
type fault struct {
	name       string
	start, end int64
	target     string // the member a leader fault met, if any
}

// build turns operations, lease losses and faults into a time-ordered event
// list, as a recorder would have written it.
func build(ops []op, leases []lost, faults []fault) []history.Event {
	var evs []history.Event
	for i, o := range ops {
		id := i + 1
		typ := o.typ
		if typ == "" {
			typ = history.Ok
		}
		evs = append(evs, history.Event{Time: o.call, Type: history.Invoke, ID: id, Client: o.client, Op: o.op, Lock: "l"})
		if o.ret >= 0 {
			evs = append(evs, history.Event{Time: o.ret, Type: typ, ID: id, Client: o.client, Op: o.op, Lock: "l",
				Token: o.token, Lease: o.lease, Value: o.value, Accepted: o.accepted, Reason: o.reason, WriteAt: o.writeAt})
		}
	}
	for _, l := range leases {
		evs = append(evs, history.Event{Time: l.t, Type: history.LeaseLost, Client: l.client, AliveUntil: l.aliveUntil, Lease: l.lease,
			RenewedAt: l.renewedAt, LeaseTTL: l.ttl, Renewals: l.renewals, KeptAlive: l.keptAlive, RevokedAt: l.revokedAt})
	}
	for i, f := range faults {
		evs = append(evs, history.Event{Time: f.start, Type: history.FaultStart, ID: i + 1, Fault: f.name},
			history.Event{Time: f.end, Type: history.FaultEnd, ID: i + 1, Fault: f.name, Target: f.target})
	}
	calls := map[int]int64{}
	for _, e := range evs {
		if e.Type == history.Invoke {
			calls[e.ID] = e.Time
		}
	}
	// At one instant: completions of earlier calls, then invocations, then
	// completions of operations called at that same instant.
	rank := func(e history.Event) int {
		switch {
		case e.Type == history.Invoke:
			return 1
		case e.IsCompletion() && calls[e.ID] == e.Time:
			return 2
		}
		return 0
	}
	slices.SortStableFunc(evs, func(a, b history.Event) int {
		if a.Time != b.Time {
			return int(a.Time - b.Time)
		}
		return rank(a) - rank(b)
	})
	return evs
}
