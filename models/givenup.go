package models

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/history"
)

// givenUp is a lease a lock gave up (history.ObservedSaidEnded), rightly:
// its client heard no answer to the keep-alives it went on sending for a
// TTL or more, with no fault that can reach it in that time (see
// lateAnswer). What then went otherwise than
// its script — a release answered "not held", the next acquire on a new
// session — is a busy machine's doing, not the lock's.
type givenUp struct {
	loss     history.Loss // the lease as the lab knew it when the lock gave it up (Gone: then)
	unheard  time.Duration
	evidence string
}

// givenUps lists the history's leases given up rightly (see givenUp).
func givenUps(events []history.Event) []givenUp {
	var out []givenUp
	var excused []span
	var members map[string]map[string]bool
	for _, e := range events {
		if e.Type != history.Observed || e.What != history.ObservedSaidEnded {
			continue
		}
		if excused == nil {
			excused, members = excuses(events), connections(events)
		}
		l := history.Loss{Client: e.Client, Lease: e.Lease, AliveUntil: e.AliveUntil, Gone: e.Time,
			RenewedAt: e.RenewedAt, TTL: e.LeaseTTL, Renewals: e.Renewals, KeptAlive: e.KeptAlive}
		if d := lateAnswer(reaching(excused, e.Client, members), l); d > 0 {
			out = append(out, givenUp{loss: l, unheard: time.Duration(d), evidence: fmt.Sprintf(
				"%s: %s's lock said its session on lease %x had ended; answers to its "+
					"keep-alives at %v, keep-alives sent at %v", at(e.Time), e.Client, e.Lease, times(e.KeptAlive), times(e.Renewals))})
		}
	}
	return out
}

// why says, in a clause, why g's lease was the machine's to lose.
func (g givenUp) why() string {
	return fmt.Sprintf("%s's lock gave its lease up at %s: its client heard no answer "+
		"to the keep-alives it went on sending for %v (TTL %v), with no fault on its way to the server, and giving it up "+
		"was right", g.loss.Client, at(g.loss.Gone), round(g.unheard), time.Duration(g.loss.TTL))
}

// times lists ts on the run's clock.
func times(ts []int64) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = at(t)
	}
	return out
}

// lateAnswer is how long l's client went without an answer to its
// keep-alives before its lock said the session ended (l.Gone), when that
// was a TTL or more with no fault that can reach it (excused) in that
// time: as unheard says, or — for a client that had sent a keep-alive
// after its last answer — when the next answer came, a TTL or more after
// the last, however soon its renewer stopped asking. An answer that late
// is the server's or the machine's slowness, and a renewer that gives the
// lease up a TTL after its last answer (etcd's client does, its checks a
// tick apart, so at a one-second TTL it may send only one keep-alive in
// between) is right to. Zero if there is none.
func lateAnswer(excused []span, l history.Loss) int64 {
	if d := unheard(excused, 0, l); d > 0 {
		return d
	}
	if l.TTL <= 0 || l.RenewedAt == 0 {
		return 0
	}
	last, next := int64(-1), int64(-1)
	for _, a := range l.KeptAlive {
		switch {
		case a < l.RenewedAt:
			last = a
		case next < 0:
			next = a
		}
	}
	if last < 0 || next < 0 || next-last < l.TTL || excusedBetween(excused, last, min(next, l.Gone), 0, true) {
		return 0
	}
	return next - last
}
