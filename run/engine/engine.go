package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/script"
)

// A Store is what the engine needs of one store.
type Store interface {
	// Links opens the links of client, living at member: one proxy of the
	// lab's for each server it talks to, cut, delayed and paused apart
	// from every other client's. An unknown member is an error.
	Links(client, member string) ([]*netproxy.Proxy, error)
	// Locker makes client's lock over its links — again after a crash, as
	// a process started again makes its lock anew; done closes what was
	// made besides the lock (the store's clients).
	Locker(client string, links []*netproxy.Proxy) (l lock.Locker, done func() error, err error)
	// Follow starts following g, client's new grant, alive when the lock
	// returned it: lease is the lease it rests on, as the history names
	// it; renewed notes each request of the client's that carries the
	// grant's value (a keep-alive), nil for none.
	Follow(client string, g lock.Grant) (lease int64, renewed func(time.Time))
	// Released stops following lease, its client's release having
	// returned, and reports whether the store had ended it before.
	Released(lease int64) bool
	// Settle looks at once at every grant still followed: after a release,
	// a grant the release removed that was not its own is seen gone before
	// anyone else can be granted in its place.
	Settle(ctx context.Context)
	// Gone looks again at the grant resting on lease and reports whether
	// the store no longer has it (its lease ended, or it was removed); an
	// error if the store follows no grant on lease.
	Gone(ctx context.Context, lease int64) (bool, error)
	// Left names what of the run's lock is left on the store (keys,
	// nodes, where they are): none when it is free.
	Left(ctx context.Context) ([]string, error)
}

// A Queueing store can tell that a client's pending acquire is done asking
// and waits, as the store keeps waiters (a watch set on the lock's nodes):
// a fault applied then meets it waiting, not a request of its under way.
// WaitQueued asks it once the client has been answered, for a TTL at
// most: a waiter the store never shows waiting is taken as answered.
type Queueing interface {
	Queued(ctx context.Context, client string) (bool, error)
}

// Config describes a run.
type Config struct {
	Store     Store
	Resources []resource.Resource
	// Sinks are where each resource's history is written besides memory.
	Sinks []history.Sink
	// Minimum is the progress the run must make; nil states none.
	Minimum *history.Minimum
	// Options are the run's locks' (TTL in seconds, at least 1; the prefix
	// its keys live under).
	Options lock.Options
	// OpTimeout bounds one acquire, critical section or release; zero
	// means run.DefaultOpTimeout.
	OpTimeout time.Duration
	// Sweep is the store's own look at every grant it follows, taken every
	// SweepEvery until Finish (and again by Finish's settle, if it asks).
	Sweep func(ctx context.Context)
	// Watch, if set, watches the store until Finish, recording on the
	// run's histories (etcd's members' leaders).
	Watch func(ctx context.Context, hs run.Histories)
	// StoreName names the store in what it cannot do ("Redis").
	StoreName string
	// ClientShim, if set, is the clock shim (clockshim.Build's path) the
	// run preloads into every lock run as a program, each client's reading
	// a clock of its own, which JumpClientClock moves.
	ClientShim string
}

// Engine is one run of one lock on one store: its clients, the resources
// and one history per resource. Methods are safe for concurrent use by
// different clients; one client does one thing at a time.
type Engine struct {
	store     Store
	hs        run.Histories
	windows   *faults.Windows
	opts      lock.Options
	opTimeout time.Duration
	minimum   *history.Minimum
	storeName string

	mu      sync.Mutex
	clients map[string]*client
	order   []string
	tokens  run.TokenLabels
	bg      context.Context

	stop context.CancelFunc
	done chan struct{}
	// watching ends when the run finishes; following are the goroutines
	// following grants' Lost (told.go).
	watching  context.Context
	following sync.WaitGroup
	// abandoned are the Acquire calls the lab stopped waiting for.
	abandoned run.Abandoned
	// releaseKept: a release of the run freed nothing (ReleaseChecker).
	releaseKept atomic.Bool
	// clocks are the clients' own wall clocks (clientclock.go).
	clocks clientClocks
}

// SweepEvery is how often the store's Sweep looks at its grants.
const SweepEvery = 20 * time.Millisecond

// every calls f every d until ctx ends.
func every(ctx context.Context, d time.Duration, f func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f(ctx)
	}
}

// New prepares a run and starts its watchers: the store's sweep, and the
// lab's own over its stalls and starvation. The sweep may start before New
// returns: it must touch the Engine only through a grant it follows, which
// only a client of the Engine makes.
func New(cfg Config) (*Engine, error) {
	if cfg.Store == nil || len(cfg.Resources) == 0 {
		return nil, errors.New("engine: a run needs a store and a resource")
	}
	e := &Engine{store: cfg.Store, opts: cfg.Options, minimum: cfg.Minimum, storeName: cmp.Or(cfg.StoreName, "this store"),
		opTimeout: cmp.Or(cfg.OpTimeout, run.DefaultOpTimeout), clients: map[string]*client{},
		clocks: clientClocks{shim: cfg.ClientShim}}
	e.opts.TTL = max(e.opts.TTL, 1)
	e.hs = run.NewHistories(cfg.Resources, cfg.Sinks, time.Now())
	e.windows = faults.NewWindows(faults.RecorderFunc(func(ev faults.Event) {
		e.hs.Fault(ev.ID, ev.Phase == faults.Start, ev.Spec(), ev.Target, ev.Err)
	}))
	ctx, cancel := context.WithCancel(context.Background())
	e.stop, e.done, e.watching = cancel, make(chan struct{}), ctx
	go func() {
		defer close(e.done)
		var wg sync.WaitGroup
		if cfg.Sweep != nil {
			wg.Go(func() { every(ctx, SweepEvery, cfg.Sweep) })
		}
		if cfg.Watch != nil {
			wg.Go(func() { cfg.Watch(ctx, e.hs) })
		}
		// The lab standing still is the environment's, not the lock's: the
		// servers' clocks run on while every client stands.
		wg.Go(func() { run.WatchStalls(ctx, e.hs.Stall) })
		wg.Go(func() { run.WatchStarved(ctx, e.hs.Starved) })
		wg.Wait()
	}()
	return e, nil
}

// Histories are the run's histories, for the store to record on.
func (e *Engine) Histories() run.Histories { return e.hs }

// Options are the run's locks' options.
func (e *Engine) Options() lock.Options { return e.opts }

// OpTimeout bounds one operation of the run's.
func (e *Engine) OpTimeout() time.Duration { return e.opTimeout }

// Bind makes ctx the run's context: background steps outlive the step
// that started them, and end with ctx.
func (e *Engine) Bind(ctx context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.bg = ctx
}

// Background is the context for work that outlives step, the step
// starting it: the run's (Bind), or step's if none is bound.
func (e *Engine) Background(step context.Context) context.Context { return e.background(step) }

// background is the context for work that outlives the step starting it.
func (e *Engine) background(step context.Context) context.Context {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bg != nil {
		return e.bg
	}
	return step
}

// TTL is the run's lease (key expiry), in seconds.
func (e *Engine) TTL() int { return e.opts.TTL }

// TTLDuration is the run's lease as a duration.
func (e *Engine) TTLDuration() time.Duration { return time.Duration(e.opts.TTL) * time.Second }

// Resources names the run's resources, in history order.
func (e *Engine) Resources() []string { return e.hs.Names() }

// Events returns the history of resource i so far.
func (e *Engine) Events(i int) []history.Event { return e.hs.Events(i) }

// Err is the first error a history's recorder met: a run with one has a
// truncated history and must not be judged.
func (e *Engine) Err() error { return e.hs.Err() }

// Reports checks every resource's history so far.
func (e *Engine) Reports() ([]models.Report, error) { return e.hs.Reports(e.minimum) }

// Check checks every resource's history so far: the check step.
func (e *Engine) Check() (run.Outcome, error) { return e.hs.Check(e.minimum) }

// Finish ends open faults, stops the watchers, has settle look once more
// at the store, records each resource's final value (final reads one the
// lab does not keep itself; nil: there is none) and closes the clients:
// what a store's Close does before removing what the run left.
func (e *Engine) Finish(ctx context.Context, settle func(context.Context) error, final func(context.Context, resource.Resource) (int64, error)) error {
	_, herr := e.Heal(ctx)
	e.stop()
	<-e.done
	e.following.Wait()
	errs := []error{herr}
	if settle != nil {
		errs = append(errs, settle(ctx))
	}
	for i := range e.hs {
		r := e.hs.Resource(i)
		if p, ok := r.(interface{ Peek() int64 }); ok {
			e.hs.Final(i, p.Peek())
			continue
		}
		if final == nil {
			continue
		}
		v, err := final(ctx, r)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading the final value of %s: %w", r.Name(), err))
			continue
		}
		e.hs.Final(i, v)
	}
	cc, _ := e.store.(ClientCloser)
	for _, c := range e.all() {
		errs = append(errs, c.close())
		if cc != nil {
			errs = append(errs, cc.CloseClient(c.name))
		}
	}
	errs = append(errs, e.abandoned.Wait(ctx), e.removeClocks())
	return errors.Join(errs...)
}

// Apply applies a fault of the store's own with do: its window is on the
// timeline from before do until it is undone (Heal), as for every fault.
func (e *Engine) Apply(ctx context.Context, f faults.Fault, do faults.Applier) (*faults.Injection, error) {
	return e.windows.Apply(ctx, f, do)
}

// Windows are the run's fault windows, for a store that applies faults
// of its own by other means (etcd's nemesis): one timeline, one count.
func (e *Engine) Windows() *faults.Windows { return e.windows }

// NotHere answers a command the store cannot do.
func (e *Engine) NotHere(what, why string) error {
	return fmt.Errorf("%s: not available on %s (%s)", what, e.storeName, why)
}

// Expire is not available where the lab cannot end a lease by itself.
func (e *Engine) Expire(context.Context, string, string) (run.Outcome, error) {
	return run.Outcome{}, e.NotHere("expire", "it needs a store that can "+script.Revoke.Words()+" or "+script.Lapse.Words())
}

// ReleaseAnswerLost is not available on this store.
func (e *Engine) ReleaseAnswerLost(context.Context, string) (run.Outcome, error) {
	return run.Outcome{}, e.NotHere("release answer=lost", "it needs a store that can "+script.ReleaseAnswerLost.Words())
}

// ready is client, ready for a step of its lock's: a lock made anew if
// the client crashed since its last one was made, as a process started
// again makes its lock; an error if its Locker is still in an Acquire that
// ignored its deadline (run.ErrStuck).
func (e *Engine) ready(name string) (*client, error) {
	c, err := e.client(name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	dead := c.born != c.crashes
	c.mu.Unlock()
	if dead {
		if err := e.renew(c); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stuck {
		return nil, fmt.Errorf("client %s: %w", name, run.ErrStuck)
	}
	return c, nil
}

func (e *Engine) client(name string) (*client, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.clients[name]
	if !ok {
		return nil, fmt.Errorf("unknown client %q (clients: %s)", name, strings.Join(e.order, ", "))
	}
	return c, nil
}

// Clients names the run's clients in creation order.
func (e *Engine) Clients() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.order)
}

// all lists the run's clients in creation order.
func (e *Engine) all() []*client {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*client, 0, len(e.order))
	for _, n := range e.order {
		out = append(out, e.clients[n])
	}
	return out
}
