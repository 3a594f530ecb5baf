package run

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock/resource"
)

// resourceRun is one protected resource and its history.
type resourceRun struct {
	res resource.Resource
	mem *history.Memory
	rec *history.Recorder
}

// histories are the run's resources, each with its history: every fact of
// the run but a critical section's (which differs per resource) is
// recorded on every one of them, through these methods.
type histories []*resourceRun

// invoke records the start of client's op on every history, with the
// moment its context ends (zero: none recorded); the ids are per history.
func (hs histories) invoke(client string, op history.Op, deadline time.Time) []int {
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

// complete records the end of the operations ids, with the same outcome
// on every history.
func (hs histories) complete(ids []int, err error, out history.Event) {
	for i, h := range hs {
		h.rec.Complete(ids[i], err, out)
	}
}

// observe records what the lab saw about client or member (see
// history.Observed).
func (hs histories) observe(what, client, member string) {
	for _, h := range hs {
		h.rec.Observe(what, client, member)
	}
}

func (hs histories) fault(id int, start bool, spec history.FaultSpec, target string, err error) {
	for _, h := range hs {
		h.rec.Fault(id, start, spec, target, err)
	}
}

func (hs histories) leaseLost(end history.LeaseEnd) {
	for _, h := range hs {
		h.rec.LeaseLost(end)
	}
}

func (hs histories) grantGone(client string, token int64) {
	for _, h := range hs {
		h.rec.ObserveGrantGone(client, token)
	}
}

func (hs histories) badToken(b history.BadToken) {
	for _, h := range hs {
		h.rec.ObserveBadToken(b)
	}
}

func (hs histories) lost(what, client string, token int64) {
	for _, h := range hs {
		h.rec.ObserveLost(what, client, token)
	}
}

func (hs histories) stall(from time.Time) {
	for _, h := range hs {
		h.rec.ObserveStall(from)
	}
}

func (hs histories) starved(from time.Time) {
	for _, h := range hs {
		h.rec.ObserveStarved(from)
	}
}

// err is the first error a history's recorder met (a sink that failed).
func (hs histories) err() error {
	for _, h := range hs {
		if err := h.rec.Err(); err != nil {
			return fmt.Errorf("recording the %s history: %w", h.res.Name(), err)
		}
	}
	return nil
}
