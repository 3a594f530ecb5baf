package run

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/models"
)

// resourceRun is one protected resource and its history.
type resourceRun struct {
	res resource.Resource
	mem *history.Memory
	rec *history.Recorder
}

// Histories are a run's resources, each with its history, all on one
// clock: every fact of the run but a critical section's (which differs per
// resource, see CriticalSection) is recorded on every one of them, through these
// methods. Every store's engine records through them.
type Histories []*resourceRun

// NewHistories gives each resource a history starting at start, kept in
// memory and written to the sink of the same index too, if there is one.
func NewHistories(res []resource.Resource, sinks []history.Sink, start time.Time) Histories {
	hs := make(Histories, len(res))
	for i, r := range res {
		mem := &history.Memory{}
		var sink history.Sink = mem
		if i < len(sinks) && sinks[i] != nil {
			sink = history.Tee{mem, sinks[i]}
		}
		hs[i] = &resourceRun{res: r, mem: mem, rec: history.NewRecorderAt(sink, start)}
	}
	return hs
}

// Invoke records the start of client's op on every history, with the
// moment its context ends (zero: none recorded); the ids are per history.
func (hs Histories) Invoke(client string, op history.Op, deadline time.Time) []int {
	ids := make([]int, len(hs))
	for i, h := range hs {
		in := history.Event{Lock: "lock"}
		if !deadline.IsZero() {
			in.Deadline = h.rec.Since(deadline)
		}
		ids[i] = h.rec.Invoke(client, op, in)
	}
	return ids
}

// Complete records the end of the operations ids, with the same outcome
// on every history.
func (hs Histories) Complete(ids []int, err error, out history.Event) {
	for i, h := range hs {
		h.rec.Complete(ids[i], err, out)
	}
}

// Observe records what the lab saw about client or member (see
// history.Observed).
func (hs Histories) Observe(what, client, member string) {
	for _, h := range hs {
		h.rec.Observe(what, client, member)
	}
}

// Fault records an edge of a fault's window.
func (hs Histories) Fault(id int, start bool, spec history.FaultSpec, target string, err error) {
	for _, h := range hs {
		h.rec.Fault(id, start, spec, target, err)
	}
}

// LeaseLost records that the store ended a client's lease.
func (hs Histories) LeaseLost(end history.LeaseEnd) {
	for _, h := range hs {
		h.rec.LeaseLost(end)
	}
}

// SaidEnded records that a client's lock answered that its session had
// ended (see history.ObservedSaidEnded).
func (hs Histories) SaidEnded(end history.LeaseEnd) {
	for _, h := range hs {
		h.rec.ObserveSaidEnded(end)
	}
}

// GrantGone records that a holder's grant left the store while it held it
// and was not releasing it.
func (hs Histories) GrantGone(client string, token int64) {
	for _, h := range hs {
		h.rec.ObserveGrantGone(client, token)
	}
}

// ReleaseKept records that client's release of its grant with token
// answered released and the store still holds the grant (see
// history.ObservedReleaseKept).
func (hs Histories) ReleaseKept(client string, token int64) {
	for _, h := range hs {
		h.rec.ObserveReleaseKept(client, token)
	}
}

// Leaseless records that a grant rests on no lease on the store (see
// history.ObservedLeaseless).
func (hs Histories) Leaseless(client string, token int64) {
	for _, h := range hs {
		h.rec.ObserveLeaseless(client, token)
	}
}

// BadToken records, on every history, a grant whose token breaks
// lock.Grant's contract (see history.BadToken).
func (hs Histories) BadToken(b history.BadToken) {
	for _, h := range hs {
		h.rec.ObserveBadToken(b)
	}
}

// ObserveLost records what became of the Grant.Lost of client's grant
// token (history.ObservedToldLost, or ObservedUnfollowed).
func (hs Histories) ObserveLost(what, client string, token int64) {
	for _, h := range hs {
		h.rec.ObserveLost(what, client, token)
	}
}

// Stall records that the whole lab stood still from from until now.
func (hs Histories) Stall(from time.Time) {
	for _, h := range hs {
		h.rec.ObserveStall(from)
	}
}

// Starved records that the lab's process was starved of CPU from from.
func (hs Histories) Starved(from time.Time) {
	for _, h := range hs {
		h.rec.ObserveStarved(from)
	}
}

// Leaderless records that member was without its leader from from until now.
func (hs Histories) Leaderless(member string, from time.Time) {
	for _, h := range hs {
		h.rec.ObserveLeaderless(member, from)
	}
}

// Err is the first error a history's recorder met (a sink that failed): a
// run with one has a truncated history and must not be judged.
func (hs Histories) Err() error {
	for _, h := range hs {
		if err := h.rec.Err(); err != nil {
			return fmt.Errorf("recording the %s history: %w", h.res.Name(), err)
		}
	}
	return nil
}

// Names names the resources, in history order.
func (hs Histories) Names() []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.res.Name()
	}
	return out
}

// Resource is the resource of history i.
func (hs Histories) Resource(i int) resource.Resource { return hs[i].res }

// Events returns history i so far.
func (hs Histories) Events(i int) []history.Event { return hs[i].mem.Events() }

// Final records v as resource i's final value.
func (hs Histories) Final(i int, v int64) { hs[i].rec.Final(v) }

// Reports checks every history so far, holding each to minimum.
func (hs Histories) Reports(minimum *history.Minimum) ([]models.Report, error) {
	events := make([][]history.Event, len(hs))
	for i := range hs {
		events[i] = hs.Events(i)
	}
	return Reports(minimum, events...)
}

// Check checks every history so far: the check step's outcome.
func (hs Histories) Check(minimum *history.Minimum) (Outcome, error) {
	reports, err := hs.Reports(minimum)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Kind: Checked}
	for i, r := range reports {
		out.Checks = append(out.Checks, ResourceCheck{Resource: hs[i].res.Name(), Report: r})
	}
	return out, nil
}
