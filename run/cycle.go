package run

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Cycler is what the workloads need of a run, whatever its store: clients
// that acquire, work in their critical section and release: every
// store's run is one.
type Cycler interface {
	Members() []string
	TTL() int
	AddClient(ctx context.Context, name, member string) error
	Acquire(ctx context.Context, client string) (Outcome, error)
	CSWork(ctx context.Context, client string, d time.Duration) (Outcome, error)
	ReleaseGrant(ctx context.Context, client, label string) (Outcome, error)
}

// cycleOn is one client's acquire → critical section (working for work)
// → release on any run, calling granted once it holds; it reports whether
// the critical section ran.
func cycleOn(ctx context.Context, r Cycler, client string, work time.Duration, granted func()) bool {
	if _, err := r.Acquire(ctx, client); err != nil {
		return false
	}
	granted()
	_, csErr := r.CSWork(ctx, client, work)
	r.ReleaseGrant(ctx, client, "") //nolint:errcheck // the history has it
	return csErr == nil
}

// SlowHoldersOn is the slow-holder workload (see etcdrun.Env.SlowHolders) on any
// run, etcd's or Redis'.
func SlowHoldersOn(ctx context.Context, r Cycler, work map[string]time.Duration) error {
	members := r.Members()
	clients := slices.Sorted(maps.Keys(work))
	for i, name := range clients {
		if err := r.AddClient(ctx, name, members[i%len(members)]); err != nil {
			return err
		}
	}
	slowest := slices.MaxFunc(clients, func(a, b string) int { return cmp.Compare(work[a], work[b]) })
	holding := make(chan struct{})
	var once sync.Once
	held := func() { once.Do(func() { close(holding) }) }
	var wg sync.WaitGroup
	for _, name := range clients {
		granted := func() {}
		if name == slowest {
			granted = held
		}
		wg.Go(func() {
			defer granted() // the slowest never held: the others go on
			if name != slowest {
				select {
				case <-holding:
				case <-ctx.Done():
					return
				}
			}
			for range 3 {
				if cycleOn(ctx, r, name, work[name], granted) || ctx.Err() != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	return nil
}

// ContendOn is the contention workload without a fault (see ContendOnUnder)
// on any run: n clients, on the members in turn, acquire, work and release
// in a loop until after critical sections have completed, or progress
// stalls.
func ContendOn(ctx context.Context, r Cycler, n int, after int64) error {
	names, err := addClients(ctx, r, n)
	if err != nil {
		return err
	}
	sections := newTally()
	stop := loop(ctx, names, sections, func(name string) bool { return cycleOn(ctx, r, name, 0, func() {}) })
	defer stop()
	sections.waitFor(ctx, after, RegrantWithin(r.TTL()))
	return nil
}

// addClients adds clients c1…cn to r, on its members in turn.
func addClients(ctx context.Context, r Cycler, n int) ([]string, error) {
	members := r.Members()
	var names []string
	for i := range n {
		name := fmt.Sprintf("c%d", i+1)
		if err := r.AddClient(ctx, name, members[i%len(members)]); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

// loop has every client of names run cycle over and over, counting each
// critical section it reports done, until stop (which returns once each
// has finished the cycle it is in) or ctx ends.
func loop(ctx context.Context, names []string, sections *tally, cycle func(name string) bool) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Go(func() {
			for !done.Load() && ctx.Err() == nil {
				if !sections.turn(ctx, name) {
					continue // ctx ended, or the gate opened: look again
				}
				if cycle(name) {
					sections.add(name)
				}
			}
		})
	}
	return func() {
		done.Store(true)
		wg.Wait()
	}
}
