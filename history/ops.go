package history

import (
	"math"
	"slices"
	"time"
)

// Infinity is the Return of an operation whose outcome is unknown: it may
// take effect at any time after its call, or never.
const Infinity = math.MaxInt64

// Operation is an invocation paired with its completion.
type Operation struct {
	ID     int
	Client string
	Op     Op
	Lock   string
	// Type is Ok, Fail or Info. An operation never completed is Info.
	Type         Type
	Call, Return int64 // Return is Infinity for Info
	// Answered is when the client heard the operation's outcome (for Info
	// too: it stopped waiting then, not knowing); zero if it never did.
	Answered int64
	// Deadline is when an acquire's context ended (Event.Deadline); zero
	// if not recorded.
	Deadline int64
	// Tells: the grant came with a Grant.Lost the lab follows (Event.Tells).
	Tells bool

	Token    int64
	Lease    int64  // the lease a grant rests on; zero if not recorded
	Key      string // the store's key a grant names; "" if not recorded
	Value    *int64
	Accepted *bool
	Reason   string
	Error    string
	WriteAt  int64 // when a critical section sent its write; zero if unknown
	// Synthetic marks a release the history did not contain: the client
	// ended the history holding the lock (see Pair).
	Synthetic bool
}

// Pair turns events into operations in invocation order. Info operations and
// those never completed get Return = Infinity.
//
// A client that crashed holding the lock (an observed crash, after a grant
// that returned ok or info and no release) gets a synthetic release at the
// moment it crashed: a dead process believes nothing, and its restarted
// self starts afresh. The server may keep its key until its lease ends; that
// is the validity check's business, not belief's.
//
// A client that ends the history holding the lock — its last acquire
// returned ok or info and no release followed — gets a synthetic Info
// release, as Jepsen gives a client that died holding: without it, every
// later grant would look like a second holder. The release is placed where
// the holder really stopped holding, never earlier: where its grant's lease
// ended on the server (from the last moment it was known alive), or, if the
// server never ended that lease, at the end of the history — and not before
// the client's own last event, since a client that went on acting (a late
// write, a release refused as "not held") believed it held until then. A
// synthetic release is a modelling device for the mutex model only: it
// closes no validity window.
func Pair(events []Event) []Operation {
	var ops []Operation
	index := map[int]int{} // id → position in ops
	var end int64
	last := map[string]int64{} // client → its last event
	var crashes []Event
	for _, e := range events {
		end = max(end, e.Time)
		if e.Client != "" && (e.Type == Invoke || e.IsCompletion()) {
			last[e.Client] = e.Time
		}
		if e.Type == Observed && e.What == ObservedCrashed {
			crashes = append(crashes, e)
		}
		switch {
		case e.Type == Invoke:
			index[e.ID] = len(ops)
			ops = append(ops, Operation{ID: e.ID, Client: e.Client, Op: e.Op, Lock: e.Lock, Type: Info,
				Call: e.Time, Return: Infinity, Token: e.Token, Deadline: e.Deadline})
		case e.IsCompletion():
			i, ok := index[e.ID]
			if !ok {
				continue
			}
			op := &ops[i]
			op.Type, op.Error, op.Answered = e.Type, e.Error, e.Time
			if e.Type != Info {
				op.Return = e.Time
			}
			if e.Token != 0 {
				op.Token = e.Token
			}
			op.Lease, op.Key, op.Value, op.WriteAt, op.Tells = e.Lease, e.Key, e.Value, e.WriteAt, e.Tells
			op.Accepted, op.Reason = e.Accepted, e.Reason
		}
	}
	return append(ops, syntheticReleases(ops, crashes, LeaseLosses(events), last, end)...)
}

// Loss is one lease-lost event: the lease ended on the server between
// AliveUntil and Gone.
type Loss struct {
	Client           string
	Lease            int64
	AliveUntil, Gone int64
	// RenewedAt, TTL, Renewals and KeptAlive: see Event.RenewedAt,
	// Event.LeaseTTL, Event.Renewals and Event.KeptAlive.
	RenewedAt, TTL int64
	Renewals       []int64
	KeptAlive      []int64
	// RevokedAt: see Event.RevokedAt.
	RevokedAt int64
}

// Unanswered is how long, across [from, to], the client went without an
// answer to its keep-alives (see Event.KeptAlive): from the last answer
// before from to the first at or after to, or to itself if none came then.
// false if no answer before from is known.
func (l Loss) Unanswered(from, to int64) (time.Duration, bool) {
	last, ok := int64(0), false
	for _, a := range l.KeptAlive {
		if a < from {
			last, ok = a, true
		}
	}
	if !ok {
		return 0, false
	}
	next := to
	for _, a := range l.KeptAlive {
		if a >= to {
			next = a
			break
		}
	}
	return time.Duration(next - last), true
}

// RenewedBefore is the latest keep-alive of Renewals sent before t, or
// false if none is known.
func (l Loss) RenewedBefore(t int64) (int64, bool) {
	for i := len(l.Renewals) - 1; i >= 0; i-- {
		if l.Renewals[i] < t {
			return l.Renewals[i], true
		}
	}
	return 0, false
}

// Renewed reports whether the lease's client sent it a keep-alive within
// one TTL of its last sighting alive: had the server taken that keep-alive
// in time, the lease would have outlived the moment it ended. The lock kept
// its lease; the link or the server lost it.
func (l Loss) Renewed() bool {
	return l.RenewedAt > 0 && l.TTL > 0 && l.RenewedAt+l.TTL >= l.AliveUntil
}

// EndedOnTime reports whether the lease ended a TTL or more after the last
// keep-alive its client sent, and the client sent none after it: the
// client had stopped renewing (a lock that releases without revoking its
// lease, as python-etcd3's does) and the server ended the lease when that
// keep-alive said it would. No server or link let it lapse early.
//
// A lease whose one keep-alive is its grant (Renewals' first: it starts
// the TTL as a keep-alive does) is counted from the grant: a lease a
// failed try took and left ends on time too. One whose last keep-alive,
// sent while it lived, was never answered (KeptAlive) did not.
func (l Loss) EndedOnTime() bool {
	last := l.RenewedAt
	if last <= 0 && len(l.Renewals) > 0 {
		last = slices.Max(l.Renewals)
	}
	if last <= 0 || l.TTL <= 0 || l.Gone < last+l.TTL {
		return false
	}
	for _, r := range l.Renewals {
		if r > last {
			return false
		}
	}
	if len(l.KeptAlive) > 0 && last < l.AliveUntil && slices.Max(l.KeptAlive) < last {
		// The last keep-alive was sent while the lease lived, and no
		// answer came after it: the server (or the link) never took it,
		// and the client — starved itself, or waiting on that answer —
		// sent no other. That is a lapse, not an end on schedule.
		return false
	}
	return true
}

// LeaseLosses lists the history's lease-lost events in order.
func LeaseLosses(events []Event) []Loss {
	var out []Loss
	for _, e := range events {
		if e.Type == LeaseLost {
			out = append(out, Loss{Client: e.Client, Lease: e.Lease, AliveUntil: e.AliveUntil, Gone: e.Time,
				RenewedAt: e.RenewedAt, TTL: e.LeaseTTL, Renewals: e.Renewals, KeptAlive: e.KeptAlive,
				RevokedAt: e.RevokedAt})
		}
	}
	return out
}

// LossOf finds the end of the lease a grant rests on: the loss of the
// grant's lease if the history names leases, else the first loss of the
// grant's client recorded after the grant was asked for.
func LossOf(grant Operation, losses []Loss) (Loss, bool) {
	for _, l := range losses {
		switch {
		case grant.Lease != 0 && l.Lease != 0:
			if l.Lease == grant.Lease {
				return l, true
			}
		case l.Client == grant.Client && l.Gone >= grant.Call:
			return l, true
		}
	}
	return Loss{}, false
}

// syntheticReleases finds clients that crashed or ended holding a lock and
// places their release (see Pair). ops are in call order, crashes in time
// order.
func syntheticReleases(ops []Operation, crashes []Event, losses []Loss, last map[string]int64, end int64) []Operation {
	holding := map[string]*Operation{} // client → the grant it still holds
	var clients []string
	nextID := 0
	for _, op := range ops {
		nextID = max(nextID, op.ID)
	}
	var out []Operation
	crashed := func(before int64) { // the crashes up to before end what their clients held
		for len(crashes) > 0 && crashes[0].Time <= before {
			c := crashes[0]
			crashes = crashes[1:]
			if g := holding[c.Client]; g != nil {
				nextID++
				at := max(c.Time, g.Call)
				out = append(out, Operation{ID: nextID, Client: c.Client, Op: Release, Lock: g.Lock, Type: Info,
					Call: at, Return: at, Synthetic: true})
				holding[c.Client] = nil
			}
		}
	}
	for i := range ops {
		op := &ops[i]
		crashed(op.Call)
		if _, seen := holding[op.Client]; !seen {
			clients = append(clients, op.Client)
			holding[op.Client] = nil
		}
		switch {
		case op.Op == Acquire && op.Type != Fail:
			holding[op.Client] = op // Info: it may hold
		case op.Op == Release && op.Type == Ok:
			holding[op.Client] = nil
		}
	}
	crashed(end)
	slices.Sort(clients)
	for _, c := range clients {
		g := holding[c]
		if g == nil {
			continue
		}
		nextID++
		rel := Operation{ID: nextID, Client: c, Op: Release, Lock: g.Lock, Type: Info,
			Call: max(end, g.Call), Return: Infinity, Synthetic: true}
		if l, ok := LossOf(*g, losses); ok {
			rel.Call = max(l.AliveUntil, g.Call, last[c])
			if rel.Call <= l.Gone {
				rel.Return = l.Gone
			}
		}
		out = append(out, rel)
	}
	return out
}
