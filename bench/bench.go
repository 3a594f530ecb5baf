package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/internal/cputime"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/redislock"
	"github.com/locklab/locklab/lock/zklock"
)

// Config is one measurement.
type Config struct {
	// Lock is the name the lock is known by, used in results and errors.
	Lock string
	// Factory makes one Locker per client (Run); Redis makes a Redis lock's
	// instead (RunRedis), over every server as a master if Masters, and
	// ZooKeeper a ZooKeeper lock's (RunZooKeeper), or ZooKeeperExec one
	// that makes its own session (a lock run as a process).
	Factory       etcdlock.Factory
	Redis         redislock.Factory
	Masters       bool
	ZooKeeper     zklock.Factory
	ZooKeeperExec zklock.ExecFactory
	// Clients is how many clients contend (at least 1).
	Clients int
	// Duration ends the measurement once it has run that long, and Acquires
	// once that many grants were made; at least one must be set. Whichever
	// comes first ends it.
	Duration time.Duration
	Acquires int
	// TTL is each client's lease in seconds (default 5: long enough that no
	// lease lapses on a loaded machine, which would measure recovery
	// instead of hand-off).
	TTL int
	// Section runs while the lock is held (default: nothing, so that the
	// lock's own cost is measured).
	Section func()
	// Prefix is where the lock's keys go (default "locklab/bench/"). Each
	// measurement uses a lock name of its own under it.
	Prefix string
	// contenders: the store makes its clients itself (RunContenders).
	contenders bool
	// ClusterCPU, if set, reads the CPU time the cluster has used so far:
	// the cluster runs apart from the clients (in a child process), and the
	// CPU of this process is the clients' alone. Nil: the cluster shares
	// this process, and only their sum can be measured.
	ClusterCPU func() (time.Duration, error)
}

// Result is what one measurement saw.
type Result struct {
	Lock     string        `json:"lock"`
	Clients  int           `json:"clients"`
	Acquires int           `json:"acquires"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	// LocksPerSec is Acquires / Elapsed.
	LocksPerSec float64 `json:"locks_per_sec"`
	// Acquire is how long Acquire took, call to return.
	Acquire Distribution `json:"acquire"`
	// Handoff is the time from a holder's Release call to the next grant,
	// to whichever client (with one client: to its own next grant).
	Handoff Distribution `json:"handoff"`
	// SameClient is the fraction of grants that went to the client that
	// made the previous one: about 1/Clients for a fair lock, near 1 for a
	// lock whose releasing client usually wins the race again.
	SameClient float64 `json:"same_client"`
	// Elections is how many times leadership changed during the
	// measurement (the Raft term's growth). Nothing is faulted, so any is
	// the machine being too loaded for the cluster's election timeout, and
	// the numbers include its stalls.
	Elections uint64 `json:"elections"`
	// Requests is unary etcd requests per acquire+release, all clients
	// together (keep-alives and watches are streams and are not counted).
	Requests float64 `json:"requests_per_lock"`
	// Wakeups is how many times, per release, a waiting client was woken
	// to look at the lock again: a watch response with events delivered
	// during its Acquire, or a poll of a lock.Poller. FutileWakeups are
	// those that did not end in the grant (all of an acquire's wake-ups but
	// its last): the thundering herd. A lock that wakes only the next
	// waiter has about 1 and 0; a lock that wakes every waiter, about
	// clients−1 and clients−2. A polling lock that is not a lock.Poller
	// shows only its watch events.
	Wakeups       float64 `json:"wakeups_per_release"`
	FutileWakeups float64 `json:"futile_wakeups_per_release"`
	// CPU is the CPU time spent per 1000 acquire+release.
	CPU CPU `json:"cpu_per_1000_locks"`
}

// CPU is CPU time per 1000 locks, the clients' apart from the cluster's.
type CPU struct {
	// Clients is this process's CPU: the lab clients, their locks, their
	// proxies and the measurement's own bookkeeping. When Shared, it is
	// the cluster's too.
	Clients time.Duration `json:"clients_ns"`
	// Cluster is the cluster's CPU (zero when Shared or not measured).
	Cluster time.Duration `json:"cluster_ns"`
	// Shared: the cluster ran in this process; Clients is both together.
	Shared bool `json:"shared,omitempty"`
	// Unmeasured: this platform reports no CPU time.
	Unmeasured bool `json:"unmeasured,omitempty"`
}

// Distribution summarises latencies.
type Distribution struct {
	Mean time.Duration `json:"mean_ns"`
	P50  time.Duration `json:"p50_ns"`
	P70  time.Duration `json:"p70_ns"`
	P90  time.Duration `json:"p90_ns"`
	P99  time.Duration `json:"p99_ns"`
	Max  time.Duration `json:"max_ns"`
	// Samples are every latency, in the order observed; kept for plots.
	Samples []time.Duration `json:"-"`
}

// ErrMutualExclusion means two clients were inside the lock at once while
// nothing was faulted.
var ErrMutualExclusion = errors.New("bench: two clients held the lock at once")

// ErrNoGrant means no lock was granted during the measurement: there is
// nothing to measure, and a row of zeros would read as a lock that is
// merely slow.
var ErrNoGrant = errors.New("bench: no lock was granted")

// runs numbers measurements so that each has its own client names and lock.
var runs atomic.Int64

// Run makes one measurement on c. It creates cfg.Clients lab clients and
// Lockers, and closes them all before it returns. An error from any
// Acquire or Release ends the measurement with that error.
func Run(ctx context.Context, c *cluster.Cluster, cfg Config) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	if cfg.Factory == nil {
		return Result{}, errors.New("bench: no etcd lock factory (a Redis lock is measured by RunRedis)")
	}
	workers, err := startWorkers(ctx, c, cfg)
	defer closeAll(workers)
	if err != nil {
		return Result{}, err
	}
	return measure(ctx, cfg, workers, c.Term)
}

// closeAll closes every contender.
func closeAll[C contender](cs []C) {
	for _, w := range cs {
		w.close()
	}
}

// measure runs the measurement on workers, reading the store's election
// term before and after (term nil: a store without elections).
func measure[C contender](ctx context.Context, cfg Config, workers []C, term func(context.Context) (uint64, error)) (Result, error) {
	requests := func() (n int64) {
		for _, w := range workers {
			n += w.requests()
		}
		return n
	}
	reqs0 := requests()
	var term0 uint64
	if term != nil {
		t, err := term(ctx)
		if err != nil {
			return Result{}, fmt.Errorf("bench: %w", err)
		}
		term0 = t
	}
	cpu0, err := cpuNow(cfg.ClusterCPU)
	if err != nil {
		return Result{}, err
	}
	m := &measurement{cfg: cfg, start: time.Now()}
	m.left.Store(int64(cfg.Acquires))
	m.lastRel.Store(-1)
	m.lastWho.Store(-1)
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m.cancel = cancel
	if cfg.Duration > 0 {
		// The measurement's clock and its deadline start together: it
		// lasts the whole duration, never a little less.
		var stop context.CancelFunc
		mctx, stop = context.WithDeadline(mctx, m.start.Add(cfg.Duration))
		defer stop()
	}
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Go(func() { m.work(mctx, int32(i), w) })
	}
	wg.Wait()
	elapsed := time.Since(m.start)
	cpu1, err := cpuNow(cfg.ClusterCPU)
	if err != nil {
		return Result{}, err
	}
	if m.firstErr != nil {
		return Result{}, m.firstErr
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	res := m.result(elapsed, requests()-reqs0, cpu0, cpu1)
	if res.Acquires == 0 {
		return Result{}, fmt.Errorf("%w in %s with %d client(s): nothing to measure "+
			"(a lock whose clients start slowly, such as one run as a process, needs a longer --duration)",
			ErrNoGrant, elapsed.Round(time.Millisecond), cfg.Clients)
	}
	if term != nil {
		if t, err := term(ctx); err == nil {
			res.Elections = t - term0
		}
	}
	return res, nil
}

// result sums the measurement up: elapsed long, with requests sent and the
// CPU used from cpu0 to cpu1.
func (m *measurement) result(elapsed time.Duration, requests int64, cpu0, cpu1 CPU) Result {
	n := len(m.acquires)
	res := Result{
		Lock:     m.cfg.Lock,
		Clients:  m.cfg.Clients,
		Acquires: n,
		Elapsed:  elapsed,
		Acquire:  Summarise(m.acquires),
		Handoff:  Summarise(m.handoffs),
	}
	if n > 0 {
		res.LocksPerSec = float64(n) / elapsed.Seconds()
		res.Requests = float64(requests) / float64(n)
		res.Wakeups = float64(m.wakes.Load()) / float64(n)
		res.FutileWakeups = float64(m.futile.Load()) / float64(n)
		res.CPU = cpu1.per1000(cpu0, n)
	}
	if n > 1 {
		res.SameClient = float64(m.same.Load()) / float64(n-1)
	}
	return res
}

// contender is one measured client, whatever its store: its lock as the
// measurement uses it, and what it counts.
type contender interface {
	// acquire takes the lock and returns what releases it.
	acquire(ctx context.Context) (release func(context.Context) error, err error)
	// wakeups is how many times so far the client was woken to look at
	// the lock again (watch events with events, or polls).
	wakeups() int64
	// requests is how many requests the client has sent so far.
	requests() int64
	close()
}

// worker is one measured etcd client and its Locker.
type worker struct {
	c      *cluster.Cluster
	client *cluster.Client
	locker lock.Locker
}

func (w worker) acquire(ctx context.Context) (func(context.Context) error, error) {
	return acquire(ctx, w.locker)
}

// acquire has l acquire, and returns what releases its grant.
func acquire(ctx context.Context, l lock.Locker) (func(context.Context) error, error) {
	g, err := l.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return l.Release(ctx, g) }, nil
}

func (w worker) wakeups() int64 {
	n := w.client.WatchEvents()
	if p, ok := w.locker.(lock.Poller); ok {
		n += p.Polls()
	}
	return n
}

func (w worker) requests() int64 { return w.client.Requests() }

func (w worker) close() {
	if w.locker != nil {
		w.locker.Close()
	}
	w.c.CloseClient(w.client.Name())
}

// startWorkers makes cfg.Clients clients, on members in turn, each with a
// Locker of its own on one lock name. The workers made so far are returned
// even with an error, for the caller to close.
func startWorkers(ctx context.Context, c *cluster.Cluster, cfg Config) ([]worker, error) {
	run := runs.Add(1)
	members := c.Members()
	var workers []worker
	// Its own lock name, so that measurements from other processes on the
	// same (external) cluster never share a queue.
	name := fmt.Sprintf("lock-%08x-%d", rand.Uint32(), run) // not cfg.Lock: an exec: lock's names a command
	for i := range cfg.Clients {
		if err := ctx.Err(); err != nil { // interrupted while the clients start
			return workers, err
		}
		cl, err := c.NewClient(fmt.Sprintf("bench%d-c%d", run, i+1), members[i%len(members)])
		if err != nil {
			return workers, fmt.Errorf("bench: %w", err)
		}
		workers = append(workers, worker{c: c, client: cl})
		l, err := cfg.Factory(cl.Etcd(), name, lock.Options{TTL: cfg.TTL, Prefix: cfg.Prefix})
		if err != nil {
			return workers, fmt.Errorf("bench: %s: %w", cfg.Lock, err)
		}
		workers[i].locker = l
		if _, ok := l.(process.Program); ok {
			// A lock run as a process: its requests and wake-ups are
			// counted off the client's link.
			cl.ReadWire()
		}
	}
	return workers, nil
}

// measurement is what the workers of one Run count together.
type measurement struct {
	cfg    Config
	start  time.Time
	cancel context.CancelFunc

	left    atomic.Int64 // grants still to make; < 0 once Acquires is reached
	inside  atomic.Int32
	lastRel atomic.Int64 // when the last holder called Release, ns since start; -1 before any
	lastWho atomic.Int32 // which worker made the last grant; -1 before any
	same    atomic.Int64
	wakes   atomic.Int64
	futile  atomic.Int64

	mu       sync.Mutex
	acquires []time.Duration
	handoffs []time.Duration
	firstErr error
}

// fail records the run's first error and stops every worker.
func (m *measurement) fail(err error) {
	m.mu.Lock()
	if m.firstErr == nil {
		m.firstErr = err
	}
	m.mu.Unlock()
	m.cancel()
}

// work is worker i's loop: acquire, the section, release, until the
// measurement ends.
func (m *measurement) work(ctx context.Context, i int32, w contender) {
	var acq, hand []time.Duration
	defer func() {
		m.mu.Lock()
		m.acquires = append(m.acquires, acq...)
		m.handoffs = append(m.handoffs, hand...)
		m.mu.Unlock()
	}()
	woken := w.wakeups
	cfg := m.cfg
	for ctx.Err() == nil && (cfg.Acquires == 0 || m.left.Add(-1) >= 0) {
		t0 := time.Now()
		w0 := woken()
		release, err := w.acquire(ctx)
		if err != nil {
			if ctx.Err() == nil {
				m.fail(fmt.Errorf("bench: %s: acquire: %w", cfg.Lock, err))
			}
			return
		}
		got := time.Now()
		if n := woken() - w0; n > 0 {
			m.wakes.Add(n)
			m.futile.Add(n - 1)
		}
		if m.inside.Add(1) != 1 {
			m.fail(fmt.Errorf("%w (%s, %d clients)", ErrMutualExclusion, cfg.Lock, cfg.Clients))
		}
		acq = append(acq, got.Sub(t0))
		if cfg.Section != nil {
			cfg.Section()
		}
		if r := m.lastRel.Load(); r >= 0 {
			hand = append(hand, got.Sub(m.start)-time.Duration(r))
		}
		if m.lastWho.Swap(i) == i {
			m.same.Add(1)
		}
		m.inside.Add(-1)
		m.lastRel.Store(int64(time.Since(m.start)))
		// Release is not cut short by the end of the measurement: a lock
		// left held would only slow the cleanup.
		if err := release(context.WithoutCancel(ctx)); err != nil {
			m.fail(fmt.Errorf("bench: %s: release: %w", cfg.Lock, err))
			return
		}
	}
}

// cpuNow reads the CPU used so far by this process and, if it can be read
// apart, by the cluster.
func cpuNow(cluster func() (time.Duration, error)) (CPU, error) {
	self, err := cputime.Self()
	if errors.Is(err, cputime.ErrUnsupported) {
		return CPU{Unmeasured: true}, nil
	}
	if err != nil {
		return CPU{}, fmt.Errorf("bench: CPU time: %w", err)
	}
	if cluster == nil {
		return CPU{Clients: self, Shared: true}, nil
	}
	cl, err := cluster()
	if err != nil {
		return CPU{}, fmt.Errorf("bench: the cluster's CPU time: %w", err)
	}
	return CPU{Clients: self, Cluster: cl}, nil
}

// per1000 is the CPU used from before to c, per 1000 of n locks.
func (c CPU) per1000(before CPU, n int) CPU {
	if c.Unmeasured {
		return c
	}
	scale := func(d time.Duration) time.Duration { return d * 1000 / time.Duration(n) }
	return CPU{Clients: scale(c.Clients - before.Clients), Cluster: scale(c.Cluster - before.Cluster), Shared: c.Shared}
}

func (cfg Config) withDefaults() (Config, error) {
	switch {
	case cfg.Factory == nil && cfg.Redis == nil && cfg.ZooKeeper == nil && cfg.ZooKeeperExec == nil && !cfg.contenders:
		return cfg, errors.New("bench: no lock factory")
	case cfg.Clients < 1:
		return cfg, fmt.Errorf("bench: clients: want at least 1, got %d", cfg.Clients)
	case cfg.Duration <= 0 && cfg.Acquires <= 0:
		return cfg, errors.New("bench: set a duration or a number of acquires")
	}
	if cfg.TTL == 0 {
		cfg.TTL = 5
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "locklab/bench/"
	}
	if cfg.Lock == "" {
		cfg.Lock = "lock"
	}
	return cfg, nil
}

// Summarise computes a Distribution of ds (which it sorts a copy of): a
// store measured in a package of its own summarises its floor so.
func Summarise(ds []time.Duration) Distribution {
	if len(ds) == 0 {
		return Distribution{}
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	var sum time.Duration
	for _, d := range sorted {
		sum += d
	}
	q := func(p float64) time.Duration { return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))] }
	return Distribution{
		Mean:    sum / time.Duration(len(sorted)),
		P50:     q(0.50),
		P70:     q(0.70),
		P90:     q(0.90),
		P99:     q(0.99),
		Max:     sorted[len(sorted)-1],
		Samples: ds,
	}
}

// Floor measures the least a hand-off can cost on c: one committed write
// followed by one linearizable read, one after the other from one lab
// client, samples times. A lock hands over with at least a write (the
// holder's release) and a read that sees it (the next holder's check), so
// no lock's hand-off can be faster than this distribution.
func Floor(ctx context.Context, c *cluster.Cluster, samples int) (Distribution, error) {
	if samples < 1 {
		return Distribution{}, fmt.Errorf("bench: floor: want at least 1 sample, got %d", samples)
	}
	run := runs.Add(1)
	cl, err := c.NewClient(fmt.Sprintf("bench%d-floor", run), c.Members()[0])
	if err != nil {
		return Distribution{}, fmt.Errorf("bench: floor: %w", err)
	}
	defer c.CloseClient(cl.Name())
	key := fmt.Sprintf("locklab/bench/floor-%08x-%d", rand.Uint32(), run)
	defer cl.Etcd().Delete(context.WithoutCancel(ctx), key)
	ds := make([]time.Duration, 0, samples)
	for i := range samples {
		t0 := time.Now()
		if _, err := cl.Etcd().Put(ctx, key, fmt.Sprint(i)); err != nil {
			return Distribution{}, fmt.Errorf("bench: floor: %w", err)
		}
		if _, err := cl.Etcd().Get(ctx, key); err != nil {
			return Distribution{}, fmt.Errorf("bench: floor: %w", err)
		}
		ds = append(ds, time.Since(t0))
	}
	return Summarise(ds), nil
}
