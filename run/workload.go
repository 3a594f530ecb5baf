package run

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Phases shape a contention workload: how many critical sections complete
// Before the fault is applied, During it (or until progress stalls), and
// After it is undone. Without a fault, After is the whole run.
// UntilLeasesGone holds a member fault, besides, until the server has ended
// the lease of every client of the member it cuts off — the effect the
// member-fault lessons describe — however fast the lock under test is.
type Phases struct {
	Before, During, After int64
	UntilLeasesGone       bool
}

// tally counts completed critical sections, in all and per client, and
// lets the workload wait for more of them: a condition, bounded by how long
// progress may stall.
type tally struct {
	done     atomic.Int64
	progress chan struct{}

	mu       sync.Mutex
	byClient map[string]int64
	// firsts are the only clients that may start a cycle while gate is
	// set, until it is closed (see first).
	firsts []string
	gate   chan struct{}
}

// first lets only clients start a cycle until the returned open is
// called: the others wait before their next acquire.
func (t *tally) first(clients []string) (open func()) {
	gate := make(chan struct{})
	t.mu.Lock()
	t.firsts, t.gate = clients, gate
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		t.firsts, t.gate = nil, nil
		t.mu.Unlock()
		close(gate)
	}
}

// turn reports whether client may start a cycle now: true unless a gate
// (first) holds it back, in which case it waits for the gate to open or
// ctx to end and reports false.
func (t *tally) turn(ctx context.Context, client string) bool {
	t.mu.Lock()
	gate, mine := t.gate, slices.Contains(t.firsts, client)
	t.mu.Unlock()
	if gate == nil || mine {
		return true
	}
	select {
	case <-gate:
	case <-ctx.Done():
	}
	return false
}

func newTally() *tally {
	return &tally{progress: make(chan struct{}, 1), byClient: map[string]int64{}}
}

func (t *tally) add(client string) {
	t.mu.Lock()
	t.byClient[client]++
	t.mu.Unlock()
	t.done.Add(1)
	select {
	case t.progress <- struct{}{}:
	default:
	}
}

// of is how many sections client has completed.
func (t *tally) of(client string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byClient[client]
}

// waitEach waits until every one of clients has completed a section more
// than now, for at most bound in all, or until ctx ends.
func (t *tally) waitEach(ctx context.Context, clients []string, bound time.Duration) {
	t.waitClients(ctx, clients, bound, true)
}

// waitAny waits until one of clients has completed a section more than
// now, for at most bound, or until ctx ends.
func (t *tally) waitAny(ctx context.Context, clients []string, bound time.Duration) {
	t.waitClients(ctx, clients, bound, false)
}

// waitClients is waitEach (every) or waitAny.
func (t *tally) waitClients(ctx context.Context, clients []string, bound time.Duration, every bool) {
	base := map[string]int64{}
	for _, c := range clients {
		base[c] = t.of(c)
	}
	behind := func(c string) bool { return t.of(c) <= base[c] }
	met := func() bool {
		if every {
			return !slices.ContainsFunc(clients, behind)
		}
		return slices.ContainsFunc(clients, func(c string) bool { return !behind(c) })
	}
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for !met() {
		select {
		case <-t.progress:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// waitFor waits until n more sections than now have completed, until none
// has for stall, or until ctx ends.
func (t *tally) waitFor(ctx context.Context, n int64, stall time.Duration) {
	target := t.done.Load() + n
	timer := time.NewTimer(stall)
	defer timer.Stop()
	for t.done.Load() < target {
		select {
		case <-t.progress:
			timer.Reset(stall)
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// RegrantWithin bounds how long after the last fault heals a lock on
// leases of ttl seconds must grant again: the old holder's lease must lapse
// (a TTL), then an election, a client's reconnect backoff (at most 0.5 s),
// with room to spare — 5 s with 1 s leases, and a longer lease's extra
// seconds.
func RegrantWithin(ttl int) time.Duration {
	return 5*time.Second + time.Duration(max(ttl-1, 0))*time.Second
}
