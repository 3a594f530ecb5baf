package redisrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/redislock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/run"
)

// scriptMembers is how many members the catalog's scripts name.
const scriptMembers = 3

// Resources are the resources a Redis run protects: the lab's own
// counters. etcd-guarded is etcd's: a write guarded by a Redis lock's key
// would need the resource to live in the same Redis.
func Resources() []string { return []string{"unfenced", "fenced"} }

// Config describes a run.
type Config struct {
	// Set is the Redis the run uses: one primary and its replicas (every
	// client talks to the primary), or independent masters (Masters: every
	// client talks to each, as Redlock does).
	Set     *redisd.Set
	Masters bool
	Factory redislock.Factory
	TTL     int    // seconds: the lock keys' expiry
	RunID   string // unique per run within the set: keys live under it
	Sinks   []history.Sink
	// Resource names the resources; empty means Resources().
	Resource []string
	Minimum  *history.Minimum
	// OpTimeout bounds one acquire, critical section or release; zero
	// means run.DefaultOpTimeout.
	OpTimeout time.Duration
}

// Env is one run of a Redis lock: its clients, the resources and one
// history per resource. Methods are safe for concurrent use by different
// clients; one client does one thing at a time.
type Env struct {
	set       *redisd.Set
	masters   bool
	factory   redislock.Factory
	opts      lock.Options
	ttl       int
	opTimeout time.Duration
	start     time.Time
	minimum   *history.Minimum
	res       []resource.Resource
	mems      []*history.Memory
	recs      []*history.Recorder

	mu      sync.Mutex
	clients map[string]*client
	order   []string
	tokens  run.TokenLabels
	leases  int64       // grants so far: each grant's lease is its number
	watched []*watch    // every grant the monitor follows
	faults  []openFault // faults open now, to end at heal
	faultID int
	bg      context.Context

	stopMonitor context.CancelFunc
	monitorDone chan struct{}
}

// New prepares a run and starts its monitor, which records on every
// history when a grant's key leaves the server.
func New(cfg Config) (*Env, error) {
	if cfg.Set == nil || cfg.Factory == nil {
		return nil, errors.New("redisrun: a run needs a Redis set and a lock")
	}
	names := cfg.Resource
	if len(names) == 0 {
		names = Resources()
	}
	e := &Env{set: cfg.Set, masters: cfg.Masters, factory: cfg.Factory, ttl: max(cfg.TTL, 1), minimum: cfg.Minimum,
		opTimeout: cmp.Or(cfg.OpTimeout, run.DefaultOpTimeout), start: time.Now(),
		clients: map[string]*client{}}
	e.opts = lock.Options{TTL: e.ttl, Prefix: "locklab/runs/" + cfg.RunID + "/"}
	for i, name := range names {
		if !slices.Contains(Resources(), name) {
			return nil, fmt.Errorf("redisrun: resource %q is not one a Redis lock can protect here (resources: %s)",
				name, strings.Join(Resources(), ", "))
		}
		res, err := resource.NewResource(name, "")
		if err != nil {
			return nil, err
		}
		mem := &history.Memory{}
		var sink history.Sink = mem
		if i < len(cfg.Sinks) && cfg.Sinks[i] != nil {
			sink = history.Tee{mem, cfg.Sinks[i]}
		}
		e.res, e.mems = append(e.res, res), append(e.mems, mem)
		e.recs = append(e.recs, history.NewRecorderAt(sink, e.start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.stopMonitor, e.monitorDone = cancel, make(chan struct{})
	go func() {
		defer close(e.monitorDone)
		var wg sync.WaitGroup
		wg.Go(func() { e.monitor(ctx) })
		// The lab standing still is the environment's, not the lock's: the
		// servers' clocks run on while every client stands.
		wg.Go(func() {
			run.WatchStalls(ctx, func(from time.Time) { e.each(func(r *history.Recorder) { r.ObserveStall(from) }) })
		})
		wg.Go(func() {
			run.WatchStarved(ctx, func(from time.Time) { e.each(func(r *history.Recorder) { r.ObserveStarved(from) }) })
		})
		wg.Wait()
	}()
	return e, nil
}

// each records one fact on every history.
func (e *Env) each(f func(r *history.Recorder)) {
	for _, r := range e.recs {
		f(r)
	}
}

// Bind makes ctx the run's context: background steps outlive the step
// that started them, and end with ctx.
func (e *Env) Bind(ctx context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.bg = ctx
}

func (e *Env) background(step context.Context) context.Context {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bg != nil {
		return e.bg
	}
	return step
}

// Members names the servers as a script does, m1…mN (the set's r1…rN),
// and at least m1…m3: a client's member is only where a script says it
// lives (every client talks to the primary, or to every master), so the
// catalog's scripts, written for three members, run on a Redis of one.
func (e *Env) Members() []string {
	out := make([]string, max(len(e.set.Names()), scriptMembers))
	for i := range out {
		out[i] = fmt.Sprintf("m%d", i+1)
	}
	return out
}

// member is the index of member mN.
func (e *Env) member(name string) (int, error) {
	i := slices.Index(e.Members(), name)
	if i < 0 {
		return 0, fmt.Errorf("unknown member %q (members: %s)", name, strings.Join(e.Members(), ", "))
	}
	return i, nil
}

// TTL is the lock keys' expiry, in seconds.
func (e *Env) TTL() int { return e.ttl }

// Resources names the run's resources, in history order.
func (e *Env) Resources() []string {
	out := make([]string, len(e.res))
	for i, r := range e.res {
		out[i] = r.Name()
	}
	return out
}

// Events returns the history of resource i so far.
func (e *Env) Events(i int) []history.Event { return e.mems[i].Events() }

// Err is the first error a history's recorder met: a run with one has a
// truncated history and must not be judged.
func (e *Env) Err() error {
	for i, r := range e.recs {
		if err := r.Err(); err != nil {
			return fmt.Errorf("recording the %s history: %w", e.res[i].Name(), err)
		}
	}
	return nil
}

// Reports checks every resource's history so far.
func (e *Env) Reports() ([]models.Report, error) {
	histories := make([][]history.Event, len(e.mems))
	for i := range e.mems {
		histories[i] = e.Events(i)
	}
	return run.Reports(e.minimum, histories...)
}

// Check checks every resource's history so far: the check step.
func (e *Env) Check() (run.Outcome, error) {
	reports, err := e.Reports()
	if err != nil {
		return run.Outcome{}, err
	}
	out := run.Outcome{Kind: run.Checked}
	for i, r := range reports {
		out.Checks = append(out.Checks, run.ResourceCheck{Resource: e.res[i].Name(), Report: r})
	}
	return out, nil
}

// Close ends open faults, records each resource's final value, closes the
// run's clients, stops the monitor and removes the run's keys.
func (e *Env) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, herr := e.Heal(ctx)
	e.stopMonitor()
	<-e.monitorDone
	e.sweep(ctx)
	for i, r := range e.res {
		if p, ok := r.(interface{ Peek() int64 }); ok {
			e.recs[i].Final(p.Peek())
		}
	}
	errs := []error{herr}
	for _, c := range e.allClients() {
		errs = append(errs, c.close())
	}
	errs = append(errs, e.removeKeys(ctx))
	return errors.Join(errs...)
}

// removeKeys deletes every key under the run's prefix on every running
// server that takes writes (by SCAN: a Redis of the user's own may hold
// many keys, and KEYS would block it).
func (e *Env) removeKeys(ctx context.Context) error {
	var errs []error
	for _, i := range e.servers() {
		admin := e.set.Admin(i)
		if admin == nil {
			continue
		}
		iter := admin.Scan(ctx, 0, e.opts.Prefix+"*", 100).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		err := iter.Err()
		if err == nil && len(keys) > 0 {
			err = admin.Del(ctx, keys...).Err()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("removing the run's keys from %s: %w", e.set.Names()[i], err))
		}
	}
	return errors.Join(errs...)
}

// servers are the servers a grant lives on: every master, or the primary.
func (e *Env) servers() []int {
	if e.masters {
		out := make([]int, len(e.set.Names()))
		for i := range out {
			out[i] = i
		}
		return out
	}
	return []int{e.set.Primary()}
}

// newRedis is a client of server i behind addr (a proxy of the lab's):
// no retries of its own, so a lost answer is the operation's.
func (e *Env) newRedis(i int, addr string) *redis.Client {
	o := e.set.ClientOptions(i, addr)
	o.MaxRetries, o.DialTimeout, o.ReadTimeout, o.WriteTimeout = -1, e.opTimeout, e.opTimeout, e.opTimeout
	o.ContextTimeoutEnabled, o.PoolSize = true, 4
	return redis.NewClient(o)
}

// ttlDuration is the keys' expiry.
func (e *Env) ttlDuration() time.Duration { return time.Duration(e.ttl) * time.Second }
