package etcdrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run"
)

// leasePoll is how often the lease monitor asks the server about each lease.
const leasePoll = 20 * time.Millisecond

// Env is one run of a scenario: one lock implementation, its clients, the
// three protected resources and one history per resource, all on one clock.
// Every critical section writes to all three resources, so one run gives a
// verdict for each. Methods are safe for concurrent use by different clients;
// one client does one thing at a time.
type Env struct {
	c         *cluster.Cluster
	nemesis   *faults.Nemesis
	factory   lock.EtcdFactory
	opts      lock.Options
	opTimeout time.Duration
	start     time.Time
	runs      run.Histories

	mu      sync.Mutex
	clients map[string]*worker
	order   []string // client names in creation order
	tokens  run.TokenLabels
	lost    map[int64]bool          // leases already recorded as lost
	alive   map[int64]int64         // lease → last time (run clock) it was seen alive
	ttls    map[int64]time.Duration // lease → the TTL the server granted it
	leases  map[int64]string        // every lease a client has had and not yet lost → client
	learned map[string]int          // client → how many of its lease grants the monitor has taken in
	// revoking are the leases Expire is revoking: it records their loss.
	revoking map[int64]bool
	// abandoned are the Acquire calls the lab stopped waiting for (see
	// lockerAcquire).
	abandoned run.Abandoned

	minimum     *history.Minimum
	stopMonitor context.CancelFunc
	monitorDone chan struct{}
	// monitorCtx ends when the monitor stops; following are the goroutines
	// following grants' Grant.Lost (see followLost), which end with it.
	monitorCtx context.Context
	following  sync.WaitGroup

	// bg, when set, is the run's context: background steps (async ones, a
	// pause being applied) outlive the step that started them, not the run.
	bg context.Context
}

// Bind makes ctx the run's context: a step's background work (an async
// acquire, a pause being applied) outlives the step that starts it and ends
// with ctx.
func (e *Env) Bind(ctx context.Context) { e.bg = ctx }

// background is the context for work that outlives the step starting it.
func (e *Env) background(step context.Context) context.Context {
	if e.bg != nil {
		return e.bg
	}
	return step
}

// worker is one client's state in a run.
type worker struct {
	name   string
	cl     *cluster.Client
	locker lock.Locker
	grant  lock.Grant
	grants map[string]lock.Grant // every grant the client had, by label (t1)
	held   bool
	// unwatchable: the held grant's token is not its key's create
	// revision, so the key on the server says nothing about the grant.
	unwatchable bool
	// releasing is set from just before a release is sent until it
	// returns: the key may vanish by the client's own hand meanwhile.
	releasing bool
	pause     run.Pause
	async     run.Async // the client's background step
	// crashes counts the client's crashes; born is the count its Locker
	// was made at: a Locker born before the last crash is dead.
	crashes, born int
	// acquiring is set while an acquire is pending; endedWaiting is the
	// lease the lab ended meanwhile (expire), zero if none.
	acquiring    bool
	endedWaiting int64
	// making is the lock's factory still at work for the client, after
	// renew gave up waiting for it (nil: none); closed says locker was
	// closed by a renew that has not yet replaced it.
	making chan made
	closed bool
	// stuck: locker is still in an Acquire the lab stopped waiting for (see
	// lockerAcquire); a crash's new Locker ends it.
	stuck bool
	// told is closed when the newest grant's Grant.Lost closes (nil: it
	// has none); quit when the lab replaces locker (see followLost).
	told, quit chan struct{}
}

// Config describes a run.
type Config struct {
	Cluster  *cluster.Cluster
	Factory  lock.EtcdFactory
	TTL      int
	RunID    string // unique per run within the cluster: keys live under it
	Sinks    []history.Sink
	Resource []string // resource names; empty means all three
	// Minimum is the progress the run must make (see history.Minimum);
	// nil states none.
	Minimum *history.Minimum
	// OpTimeout bounds one acquire, critical section or release; zero
	// means DefaultOpTimeout.
	OpTimeout time.Duration
}

// New prepares a run. It starts a lease monitor that records, on every
// history, when the server stops knowing a client's lease.
func New(cfg Config) (*Env, error) {
	names := cfg.Resource
	if len(names) == 0 {
		names = resource.Names()
	}
	prefix := "locklab/runs/" + cfg.RunID + "/"
	e := &Env{
		c:         cfg.Cluster,
		factory:   cfg.Factory,
		minimum:   cfg.Minimum,
		opts:      lock.Options{TTL: cfg.TTL, Prefix: prefix},
		opTimeout: cmp.Or(cfg.OpTimeout, run.DefaultOpTimeout),
		start:     time.Now(),
		clients:   map[string]*worker{},
		lost:      map[int64]bool{},
		alive:     map[int64]int64{},
		ttls:      map[int64]time.Duration{},
		leases:    map[int64]string{},
		learned:   map[string]int{},
		revoking:  map[int64]bool{},
	}
	var res []resource.Resource
	for _, name := range names {
		r, err := resource.NewResource(name, prefix+"counter")
		if err != nil {
			return nil, err
		}
		res = append(res, r)
	}
	e.runs = run.NewHistories(res, cfg.Sinks, e.start)
	e.nemesis = faults.New(cfg.Cluster, faults.RecorderFunc(func(ev faults.Event) {
		// The cluster knows clients by their run-wide names; the history
		// by the run's own ("c1"), as every operation names them.
		ev.Fault.Client = strings.TrimPrefix(ev.Fault.Client, prefix)
		e.runs.Fault(ev.ID, ev.Phase == faults.Start, ev.Spec(), strings.TrimPrefix(ev.Target, prefix), ev.Err)
	}))
	ctx, cancel := context.WithCancel(context.Background())
	e.stopMonitor, e.monitorDone, e.monitorCtx = cancel, make(chan struct{}), ctx
	var bg sync.WaitGroup
	bg.Go(func() { e.monitorLeases(ctx) })
	bg.Go(func() { e.watchStalls(ctx) })
	bg.Go(func() { e.watchLeaders(ctx) })
	bg.Go(func() { run.WatchStarved(ctx, e.runs.Starved) })
	go func() {
		bg.Wait()
		close(e.monitorDone)
	}()
	return e, nil
}

// Nemesis is the run's nemesis; its faults land on every history.
func (e *Env) Nemesis() *faults.Nemesis { return e.nemesis }

// TTL is the lease TTL, in seconds, the run's lockers are made with.
func (e *Env) TTL() int { return e.opts.TTL }

// Members names the cluster's members, in order.
func (e *Env) Members() []string { return e.c.Members() }

// Cluster is the cluster the run uses.
func (e *Env) Cluster() *cluster.Cluster { return e.c }

// Resources names the run's resources, in history order.
func (e *Env) Resources() []string {
	return e.runs.Names()
}

// Value reads resource i's counter now, through the lab's admin client,
// without taking part in the workload (no token is registered).
func (e *Env) Value(ctx context.Context, i int) (int64, error) {
	if p, ok := e.runs.Resource(i).(interface{ Peek() int64 }); ok {
		return p.Peek(), nil
	}
	return e.runs.Resource(i).Read(ctx, e.c.Admin(), lock.Grant{})
}

// Events returns the history of resource i so far.
func (e *Env) Events(i int) []history.Event { return e.runs.Events(i) }

// Err is the first error a history's recorder met (a sink that failed): a
// run with one has a truncated history and must not be judged.
func (e *Env) Err() error { return e.runs.Err() }

// Close undoes active faults, records each resource's final value, closes
// the run's lockers and clients, stops the lease monitor and, on a cluster
// the lab does not own, removes every key the run wrote.
func (e *Env) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs := []error{e.nemesis.UndoAll(ctx)}
	e.stopMonitor()
	<-e.monitorDone
	e.following.Wait()
	// One last look at every lease not yet seen gone, before the lockers
	// revoke theirs: a lease that lapsed just before the run ended must be on
	// the timeline, or its holder's validity would seem to run on. A
	// question a busy server left unanswered is asked again.
	sctx, scancel := context.WithTimeout(context.Background(), settleWait)
	errs = append(errs, e.settleLeases(sctx))
	scancel()
	for i := range e.runs {
		v, err := e.Value(ctx, i)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading the final value of %s: %w", e.runs.Resource(i).Name(), err))
			continue
		}
		e.runs.Final(i, v)
	}
	for _, w := range e.workers() {
		if w.locker != nil && !w.closed {
			w.locker.Close()
		}
		errs = append(errs, e.c.CloseClient(w.cl.Name()))
		errs = append(errs, e.dropMaking(ctx, w))
	}
	errs = append(errs, e.abandoned.Wait(ctx))
	if e.c.IsExternal() {
		// A user's own cluster is left as it was found: the run's keys (its
		// counter, what its lockers left) go. An embedded one goes whole.
		if _, err := e.c.Admin().Delete(ctx, e.opts.Prefix, clientv3.WithPrefix()); err != nil {
			errs = append(errs, fmt.Errorf("removing the run's keys (%s…) from the cluster: %w", e.opts.Prefix, err))
		}
	}
	return errors.Join(errs...)
}

// AddClient creates a lab client called name on member, with a fresh Locker.
func (e *Env) AddClient(ctx context.Context, name, member string) error {
	cl, err := e.c.NewClient(e.clientName(name), member)
	if err != nil {
		return err
	}
	w := &worker{name: name, cl: cl}
	if err := e.renew(w); err != nil {
		e.c.CloseClient(cl.Name())
		_ = e.dropMaking(ctx, w)
		return err
	}
	cl.OnCrash(func() {
		// The client's process dies: a lock run as a process is killed,
		// a Go lock is left as it is (its connection closes under it, so
		// it sends nothing more). The client's next step starts it again.
		e.mu.Lock()
		w.crashes++
		w.held = false
		l := w.locker
		e.mu.Unlock()
		if p, ok := l.(process.Program); ok {
			p.Kill()
		}
		e.runs.Observe(history.ObservedCrashed, name, "")
	})
	if _, ok := w.locker.(process.Program); ok {
		// A lock run as a process (each Locker of the client starts its
		// own, on first use): the lab learns its leases off the wire, and
		// a pause freezes the client's current process.
		cl.ReadWire()
		cl.OnPause(func(frozen bool) {
			e.mu.Lock()
			p, ok := w.locker.(process.Program)
			e.mu.Unlock()
			switch {
			case ok && frozen:
				p.Stop()
			case ok:
				p.Continue()
			}
		})
	}
	e.mu.Lock()
	e.clients[name] = w
	e.order = append(e.order, name)
	e.mu.Unlock()
	e.runs.Observe(history.ObservedConnected, name, member)
	return nil
}

// clientsOn lists the run's clients that talk to the cluster through
// member, in creation order.
func (e *Env) clientsOn(member string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, name := range e.order {
		if e.clients[name].cl.Member() == member {
			out = append(out, name)
		}
	}
	return out
}

// clientName makes the cluster-wide client name; runs share a cluster.
func (e *Env) clientName(name string) string {
	return e.opts.Prefix + name
}

// restart gives a client that crashed since its Locker was made a new one,
// as a restarted process makes its lock anew. It returns the crash count
// the step begins at: a step during which it changes was cut short by a
// crash (see crashedSince).
func (e *Env) restart(w *worker) (int, error) {
	e.mu.Lock()
	dead, n := w.born != w.crashes, w.crashes
	e.mu.Unlock()
	if dead {
		return n, e.renew(w)
	}
	return n, nil
}

// ready is client, ready for its next step: a Locker made anew if it
// crashed since its last one (see restart), and the crash count the step
// begins at.
func (e *Env) ready(client string) (*worker, int, error) {
	w, err := e.worker(client)
	if err != nil {
		return nil, 0, err
	}
	n, err := e.restart(w)
	if err == nil {
		err = e.checkStuck(w)
	}
	return w, n, err
}

// crashedSince reports whether w crashed after its crash count was n: what
// it was doing then died with it, and its outcome is unknown.
func (e *Env) crashedSince(w *worker, n int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return w.crashes != n
}

func (e *Env) worker(name string) (*worker, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	w, ok := e.clients[name]
	if !ok {
		return nil, fmt.Errorf("unknown client %q (clients: %s)", name, strings.Join(e.order, ", "))
	}
	return w, nil
}

// token labels a token t1, t2… in order of first appearance, so output is
// the same run after run.
func (e *Env) token(t int64) string { return e.tokens.Label(t) }

// Clients lists the run's clients in creation order.
func (e *Env) Clients() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.order)
}

// workers lists the run's clients in creation order.
func (e *Env) workers() []*worker {
	e.mu.Lock()
	defer e.mu.Unlock()
	ws := make([]*worker, 0, len(e.order))
	for _, name := range e.order {
		ws = append(ws, e.clients[name])
	}
	return ws
}
