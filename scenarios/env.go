package scenarios

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/lock"
)

// DefaultOpTimeout bounds one acquire, critical section or release; past it
// the operation is recorded as info (unknown outcome).
const DefaultOpTimeout = 2 * time.Second

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
	factory   lock.Factory
	opts      lock.Options
	opTimeout time.Duration
	start     time.Time
	runs      []*resourceRun

	mu      sync.Mutex
	clients map[string]*worker
	order   []string                // client names in creation order
	tokens  map[int64]int           // token → its label number (t1, t2…)
	lost    map[int64]bool          // leases already recorded as lost
	alive   map[int64]int64         // lease → last time (run clock) it was seen alive
	ttls    map[int64]time.Duration // lease → the TTL the server granted it
	leases  map[int64]string        // every lease a client has had and not yet lost → client
	learned map[string]int          // client → how many of its lease grants the monitor has taken in
	// revoking are the leases Expire is revoking: it records their loss.
	revoking map[int64]bool

	minimum     *history.Minimum
	stopMonitor context.CancelFunc
	monitorDone chan struct{}

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

// resourceRun is one protected resource and its history.
type resourceRun struct {
	res lock.Resource
	mem *history.Memory
	rec *history.Recorder
}

// worker is one client's state in a run.
type worker struct {
	name   string
	cl     *cluster.Client
	locker lock.Locker
	grant  lock.Grant
	grants map[string]lock.Grant // every grant the client had, by label (t1)
	held   bool
	// releasing is set from just before a release is sent until it
	// returns: the key may vanish by the client's own hand meanwhile.
	releasing bool
	paused    *faults.Injection
	pausing   chan pauseResult // the pause being applied, until WaitPaused
	async     chan string      // result of the client's background step
	// crashes counts the client's crashes; born is the count its Locker
	// was made at: a Locker born before the last crash is dead.
	crashes, born int
}

// EnvConfig describes a run.
type EnvConfig struct {
	Cluster  *cluster.Cluster
	Factory  lock.Factory
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

// NewEnv prepares a run. It starts a lease monitor that records, on every
// history, when the server stops knowing a client's lease.
func NewEnv(cfg EnvConfig) (*Env, error) {
	names := cfg.Resource
	if len(names) == 0 {
		names = lock.ResourceNames()
	}
	prefix := "locklab/runs/" + cfg.RunID + "/"
	e := &Env{
		c:         cfg.Cluster,
		factory:   cfg.Factory,
		minimum:   cfg.Minimum,
		opts:      lock.Options{TTL: cfg.TTL, Prefix: prefix},
		opTimeout: cmp.Or(cfg.OpTimeout, DefaultOpTimeout),
		start:     time.Now(),
		clients:   map[string]*worker{},
		tokens:    map[int64]int{},
		lost:      map[int64]bool{},
		alive:     map[int64]int64{},
		ttls:      map[int64]time.Duration{},
		leases:    map[int64]string{},
		learned:   map[string]int{},
		revoking:  map[int64]bool{},
	}
	for i, name := range names {
		res, err := lock.NewResource(name, prefix+"counter")
		if err != nil {
			return nil, err
		}
		mem := &history.Memory{}
		var sink history.Sink = mem
		if i < len(cfg.Sinks) && cfg.Sinks[i] != nil {
			sink = history.Tee{mem, cfg.Sinks[i]}
		}
		e.runs = append(e.runs, &resourceRun{res: res, mem: mem, rec: history.NewRecorderAt(sink, e.start)})
	}
	e.nemesis = faults.New(cfg.Cluster, faults.RecorderFunc(func(ev faults.Event) {
		// The cluster knows clients by their run-wide names; the history
		// by the run's own ("c1"), as every operation names them.
		ev.Fault.Client = strings.TrimPrefix(ev.Fault.Client, prefix)
		for _, r := range e.runs {
			r.rec.Fault(ev.ID, ev.Phase == faults.Start, ev.Spec(), strings.TrimPrefix(ev.Target, prefix), ev.Err)
		}
	}))
	ctx, cancel := context.WithCancel(context.Background())
	e.stopMonitor, e.monitorDone = cancel, make(chan struct{})
	var bg sync.WaitGroup
	bg.Go(func() { e.monitorLeases(ctx) })
	bg.Go(func() { e.watchStalls(ctx) })
	go func() {
		bg.Wait()
		close(e.monitorDone)
	}()
	return e, nil
}

// Nemesis is the run's nemesis; its faults land on every history.
func (e *Env) Nemesis() *faults.Nemesis { return e.nemesis }

// Cluster is the cluster the run uses.
func (e *Env) Cluster() *cluster.Cluster { return e.c }

// Resources names the run's resources, in history order.
func (e *Env) Resources() []string {
	out := make([]string, len(e.runs))
	for i, r := range e.runs {
		out[i] = r.res.Name()
	}
	return out
}

// Value reads resource i's counter now, through the lab's admin client,
// without taking part in the workload (no token is registered).
func (e *Env) Value(ctx context.Context, i int) (int64, error) {
	if p, ok := e.runs[i].res.(interface{ Peek() int64 }); ok {
		return p.Peek(), nil
	}
	return e.runs[i].res.Read(ctx, e.c.Admin(), lock.Grant{})
}

// Events returns the history of resource i so far.
func (e *Env) Events(i int) []history.Event { return e.runs[i].mem.Events() }

// Err is the first error a history's recorder met (a sink that failed): a
// run with one has a truncated history and must not be judged.
func (e *Env) Err() error {
	for _, r := range e.runs {
		if err := r.rec.Err(); err != nil {
			return fmt.Errorf("recording the %s history: %w", r.res.Name(), err)
		}
	}
	return nil
}

// Close undoes active faults, records each resource's final value, closes
// the run's lockers and clients and stops the lease monitor.
func (e *Env) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs := []error{e.nemesis.UndoAll(ctx)}
	e.stopMonitor()
	<-e.monitorDone
	// One last look at every lease not yet seen gone, before the lockers
	// revoke theirs: a lease that lapsed just before the run ended must be on
	// the timeline, or its holder's validity would seem to run on.
	e.sweepLeases(ctx)
	for i, r := range e.runs {
		v, err := e.Value(ctx, i)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading the final value of %s: %w", r.res.Name(), err))
			continue
		}
		r.rec.Final(v)
	}
	e.mu.Lock()
	ws := make([]*worker, 0, len(e.clients))
	for _, name := range e.order {
		ws = append(ws, e.clients[name])
	}
	e.mu.Unlock()
	for _, w := range ws {
		if w.locker != nil {
			w.locker.Close()
		}
		errs = append(errs, e.c.CloseClient(w.cl.Name()))
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
		if p, ok := l.(lock.Process); ok {
			p.Kill()
		}
		e.observe(history.ObservedCrashed, name, "")
	})
	if _, ok := w.locker.(lock.Process); ok {
		// A lock run as a process (each Locker of the client starts its
		// own, on first use): the lab learns its leases off the wire, and
		// a pause freezes the client's current process.
		cl.ReadWire()
		cl.OnPause(func(frozen bool) {
			e.mu.Lock()
			p, ok := w.locker.(lock.Process)
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
	e.observe(history.ObservedConnected, name, member)
	return nil
}

// observe records on every history what the lab saw about client or
// member (see history.Observed).
func (e *Env) observe(what, client, member string) {
	for _, r := range e.runs {
		r.rec.Observe(what, client, member)
	}
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

// renew gives w a new Locker (and lease), as a client does after losing its
// session.
func (e *Env) renew(w *worker) error {
	if w.locker != nil {
		w.locker.Close()
	}
	l, err := e.factory(w.cl.Etcd(), "lock", e.opts)
	if err != nil {
		return fmt.Errorf("client %s: %w", w.name, err)
	}
	e.mu.Lock()
	w.locker, w.held, w.born = l, false, w.crashes
	e.mu.Unlock()
	w.cl.SetLease(l.Lease())
	e.learn(w)
	return nil
}

// learn takes in every lease the server has granted through w's client
// since the last look — a lock may take a new lease per acquire — so the
// monitor follows each until the server ends it. A fresh grant is a server's
// answer that the lease was alive then.
func (e *Env) learn(w *worker) {
	grants := w.cl.LeaseGrants()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, g := range grants[e.learned[w.name]:] {
		id := int64(g.ID)
		if !e.lost[id] {
			e.leases[id] = w.name
			e.alive[id] = max(e.alive[id], int64(g.At.Sub(e.start)))
			if g.TTL > 0 {
				// The grant's answer is the one sure word on the TTL: a
				// lease revoked before the monitor first saw it would
				// otherwise be recorded with none.
				e.ttls[id] = g.TTL
			}
		}
	}
	e.learned[w.name] = len(grants)
	if len(grants) > 0 {
		// A lock may take its lease only when first asked to acquire (a
		// lazy session, a process that says its lease only with a grant)
		// and a new one per acquire: the client's lease is the latest the
		// server granted through its link.
		w.cl.SetLease(grants[len(grants)-1].ID)
	}
}

// leaseOf is the lease w's lock rests on now, as far as the lab knows: the
// Go lock's own word, else the latest lease granted through the client's
// link (a process lock's, or a lock whose session is not made yet when
// asked, only in Acquire).
func (e *Env) leaseOf(w *worker) clientv3.LeaseID {
	e.learn(w)
	if _, ok := w.locker.(lock.Process); !ok {
		if l := w.locker.Lease(); l != 0 {
			return l
		}
	}
	return w.cl.Lease()
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

// classify marks the errors that certainly changed nothing: the lock's own
// refusals, and etcd's refusal of a request on a lease it no longer has.
func classify(err error) error {
	if errors.Is(err, lock.ErrSessionExpired) || errors.Is(err, lock.ErrNotHeld) || errors.Is(err, lock.ErrNoToken) ||
		errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return history.Definite(err)
	}
	return err
}

// token labels a token t1, t2… in order of first appearance, so output is
// the same run after run.
func (e *Env) token(t int64) string {
	if t == 0 {
		return "none"
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	n, ok := e.tokens[t]
	if !ok {
		n = len(e.tokens) + 1
		e.tokens[t] = n
	}
	return fmt.Sprintf("t%d", n)
}

// Acquire has client acquire the lock, recorded on every history.
func (e *Env) Acquire(ctx context.Context, client string) (string, error) {
	w, err := e.worker(client)
	if err != nil {
		return "", err
	}
	crashes, err := e.restart(w)
	if err != nil {
		return "", err
	}
	// A client that saw its session's lease end makes a new session before
	// it asks again, as a real one watching its session would: whether the
	// old Locker has noticed yet is timing, not the lock's behaviour.
	if l := e.leaseOf(w); l != 0 && e.isLeaseLost(int64(l)) {
		if err := e.renew(w); err != nil {
			return "", err
		}
	}
	ids := make([]int, len(e.runs))
	for i, r := range e.runs {
		ids[i] = r.rec.Invoke(client, history.Acquire, history.Event{Lock: "lock"})
	}
	actx, cancel := context.WithTimeout(ctx, e.opTimeout)
	g, err := w.locker.Acquire(actx)
	cancel()
	e.learn(w)
	if e.crashedSince(w, crashes) {
		// Whatever the lock said, nobody was left to hear it: the grant
		// may stand on the server, or not.
		for i, r := range e.runs {
			r.rec.Complete(ids[i], cluster.ErrCrashed, history.Event{})
		}
		return fmt.Sprintf("%s: error: crashed", client), cluster.ErrCrashed
	}
	var lease int64
	if err == nil {
		lease = e.grantLease(ctx, w, g)
		g.Lease = clientv3.LeaseID(lease)
	}
	for i, r := range e.runs {
		r.rec.Complete(ids[i], classify(err), history.Event{Token: g.Token, Lease: lease})
	}
	if err != nil {
		expired, rerr := e.afterError(ctx, w, err)
		if expired {
			err = errors.Join(lock.ErrSessionExpired, err)
		}
		return fmt.Sprintf("%s: %s", client, describeErr(err)), errors.Join(err, rerr)
	}
	label := e.token(g.Token)
	e.mu.Lock()
	w.grant, w.held = g, true
	if w.grants == nil {
		w.grants = map[string]lock.Grant{}
	}
	w.grants[label] = g
	e.mu.Unlock()
	return fmt.Sprintf("%s: granted token=%s", client, label), nil
}

// grantLease is the lease g rests on: the one the lock names, else the one
// the grant's key carried when it was created (read from the server at the
// grant's revision), else the Locker's.
func (e *Env) grantLease(ctx context.Context, w *worker, g lock.Grant) int64 {
	if g.Lease != 0 {
		return int64(g.Lease)
	}
	if g.Key != "" && g.Token != 0 {
		rctx, cancel := context.WithTimeout(ctx, e.opTimeout)
		resp, err := e.c.Admin().Get(rctx, g.Key, clientv3.WithRev(g.Token))
		cancel()
		if err == nil && len(resp.Kvs) > 0 && resp.Kvs[0].Lease != 0 {
			return resp.Kvs[0].Lease
		}
	}
	return int64(w.locker.Lease())
}

// afterError handles an acquire or release that failed: if the server no
// longer has the Locker's lease — whatever error the lock gave — the Locker
// is done for and the client gets a new one, as a real client would make a
// new session. It reports whether the lease was gone.
func (e *Env) afterError(ctx context.Context, w *worker, err error) (bool, error) {
	lease := e.leaseOf(w)
	gone := errors.Is(err, lock.ErrSessionExpired)
	if !gone && lease != 0 {
		alive, aerr := e.c.LeaseAlive(context.WithoutCancel(ctx), lease)
		gone = aerr == nil && !alive
	}
	if !gone {
		return false, nil
	}
	if lease != 0 {
		e.checkLease(context.WithoutCancel(ctx), w.name, lease)
	}
	return true, e.renew(w)
}

// CS runs client's critical section on every resource at once: read each
// counter, pass the before-write pause point, write each counter+1 with the
// grant's token. Each resource's history records it as one operation.
func (e *Env) CS(ctx context.Context, client string) (string, error) {
	return e.cs(ctx, client, 0)
}

// cs is a critical section in which the client works for d between its
// read and its write: a slow holder, whose work the scenario draws from its
// seed. The holder does not look at its lease meanwhile — a real one does
// not either.
func (e *Env) cs(ctx context.Context, client string, d time.Duration) (string, error) {
	w, err := e.worker(client)
	if err != nil {
		return "", err
	}
	if _, err := e.restart(w); err != nil {
		return "", err
	}
	e.mu.Lock()
	held := w.held
	e.mu.Unlock()
	if !held {
		// A client that was not granted the lock does not enter the
		// section: what it would write is the lab's doing, not the lock's,
		// and would be judged as the lock letting two clients in.
		return fmt.Sprintf("%s: error: holds no grant", client), fmt.Errorf("%s: critical section without a grant: %w", client, lock.ErrNotHeld)
	}
	// One connection for the whole section: if the client crashes in it,
	// what is left of it dies with that connection.
	cli := w.cl.Etcd()
	cctx, cancel := context.WithTimeout(ctx, e.opTimeout)
	defer cancel()
	// An operation blocked by a pause may outlive the timeout; that is the point.
	ids := make([]int, len(e.runs))
	reads := make([]*int64, len(e.runs))
	errs := make([]error, len(e.runs))
	for i, r := range e.runs {
		ids[i] = r.rec.Invoke(client, history.CS, history.Event{Lock: "lock"})
		v, err := r.res.Read(cctx, cli, w.grant)
		if err == nil {
			reads[i] = &v
		}
		errs[i] = err
	}
	work(ctx, d)
	pauseErr := w.cl.PausePoint(ctx, lock.BeforeWrite)
	var parts []string
	for i, r := range e.runs {
		out := history.Event{Token: w.grant.Token, Value: reads[i]}
		err := errs[i]
		if err == nil && pauseErr != nil {
			err = pauseErr
			if errors.Is(pauseErr, cluster.ErrCrashed) {
				err = history.Definite(pauseErr) // it died before writing
			}
		}
		var wr lock.Written
		if err == nil {
			wctx, wcancel := context.WithTimeout(ctx, e.opTimeout)
			out.WriteAt = max(r.rec.Since(time.Now()), 1)
			wr, err = r.res.Write(wctx, cli, w.grant, *reads[i]+1)
			wcancel()
		}
		if err == nil {
			out.Accepted, out.Reason = &wr.Accepted, wr.Reason
		}
		r.rec.Complete(ids[i], classify(err), out)
		parts = append(parts, e.describeWrite(r.res.Name(), reads[i], wr, err))
	}
	return fmt.Sprintf("%s: %s", client, strings.Join(parts, "; ")), errors.Join(errs...)
}

// work waits for d, or until ctx ends: the holder's work, which its lease
// must outlive.
func work(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func (e *Env) describeWrite(res string, read *int64, wr lock.Written, err error) string {
	switch {
	case err != nil:
		return fmt.Sprintf("%s %s", res, describeErr(err))
	case wr.Accepted:
		return fmt.Sprintf("%s read %d wrote %d", res, *read, *read+1)
	}
	reason := "rejected"
	if strings.HasPrefix(wr.Reason, "stale token") {
		reason = "rejected: stale token"
	} else if strings.Contains(wr.Reason, "lock was lost") {
		reason = "rejected: lock lost"
	}
	return fmt.Sprintf("%s read %d %s", res, *read, reason)
}

// Release has client release its grant, recorded on every history.
func (e *Env) Release(ctx context.Context, client string) (string, error) {
	return e.ReleaseGrant(ctx, client, "")
}

// errPaused marks a step that never ran because its context ended while
// the client was paused before it.
var errPaused = errors.New("stopped while paused")

// ReleaseGrant has client release the grant labelled label (t1), or its
// latest grant if label is "": a client retrying the release of an older
// grant, as after an ambiguous failure.
func (e *Env) ReleaseGrant(ctx context.Context, client, label string) (string, error) {
	w, err := e.worker(client)
	if err != nil {
		return "", err
	}
	crashes, err := e.restart(w)
	if err != nil {
		return "", err
	}
	// A pause armed at before-release stops the client here, before the
	// release is sent (the stale-release scenario's frozen holder).
	if err := w.cl.PausePoint(ctx, lock.BeforeRelease); err != nil {
		return "", fmt.Errorf("%w: %w", errPaused, err)
	}
	g := w.grant
	if label != "" {
		e.mu.Lock()
		old, ok := w.grants[label]
		e.mu.Unlock()
		if !ok {
			return "", fmt.Errorf("%s was never granted %s", client, label)
		}
		g = old
	}
	ids := make([]int, len(e.runs))
	e.mu.Lock()
	w.releasing = true
	e.mu.Unlock()
	for i, r := range e.runs {
		ids[i] = r.rec.Invoke(client, history.Release, history.Event{Lock: "lock"})
	}
	rctx, cancel := context.WithTimeout(ctx, e.opTimeout)
	err = w.locker.Release(rctx, g)
	cancel()
	if e.crashedSince(w, crashes) {
		err = cluster.ErrCrashed // nobody was left to hear the answer
	}
	// Holding ends when the release returns, whatever it answered, and in
	// the same step as releasing: no moment shows the grant held and not
	// being released once its key may be gone by the client's own hand.
	e.mu.Lock()
	w.releasing = false
	if g.Token == w.grant.Token {
		w.held = false
	}
	e.mu.Unlock()
	for i, r := range e.runs {
		r.rec.Complete(ids[i], classify(err), history.Event{Token: g.Token})
	}
	e.checkOthersHold(ctx, client)
	// A grant whose lease the server already ended is not the client's to
	// release: a careful lock says "not held", etcd's Mutex deletes its key
	// name blindly and says nothing. Either is safe here (whether a late
	// release can free another holder's lock is the stale-release
	// scenario's question), so the step's output does not tell them apart;
	// the history does.
	if (err == nil || errors.Is(err, lock.ErrNotHeld)) && e.isLost(g) {
		return fmt.Sprintf("%s: released a grant whose lease had ended", client), nil
	}
	if err != nil {
		expired, rerr := e.afterError(ctx, w, err)
		if expired && !errors.Is(err, lock.ErrNotHeld) {
			err = errors.Join(lock.ErrSessionExpired, err)
		}
		return fmt.Sprintf("%s: release %s", client, describeErr(err)), errors.Join(err, rerr)
	}
	return fmt.Sprintf("%s: released", client), nil
}

// checkOthersHold looks, after client's release, at the grant of every
// other client that holds the lock and is not releasing: if its key is gone
// (or replaced) from the server while its lease is still alive — so no
// lease end removed it — and the holder still has not begun to release, a
// release not its own freed it, and that is recorded (the validity check
// fails it). Only grants that name their key can be looked at.
func (e *Env) checkOthersHold(ctx context.Context, client string) {
	type held struct {
		w *worker
		g lock.Grant
	}
	var hs []held
	e.mu.Lock()
	for _, name := range e.order {
		w := e.clients[name]
		if name != client && w.held && !w.releasing && w.grant.Key != "" && w.grant.Token != 0 &&
			w.grant.Lease != 0 && !e.lost[int64(w.grant.Lease)] {
			hs = append(hs, held{w, w.grant})
		}
	}
	e.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	for _, h := range hs {
		rctx, cancel := context.WithTimeout(ctx, e.opTimeout)
		stands, err := e.grantStands(rctx, h.g)
		cancel()
		if err != nil || stands {
			continue
		}
		if alive, err := e.c.LeaseAlive(ctx, h.g.Lease); err != nil || !alive {
			continue
		}
		e.mu.Lock()
		still := h.w.held && !h.w.releasing && h.w.grant.Token == h.g.Token
		e.mu.Unlock()
		if still {
			for _, r := range e.runs {
				r.rec.ObserveGrantGone(h.w.name, h.g.Token)
			}
		}
	}
}

// grantStands reports whether g's key is still on the server as g created
// it (same create revision): no release or lease end has removed it.
func (e *Env) grantStands(ctx context.Context, g lock.Grant) (bool, error) {
	resp, err := e.c.Admin().Get(ctx, g.Key)
	if err != nil {
		return false, err
	}
	return len(resp.Kvs) > 0 && resp.Kvs[0].CreateRevision == g.Token, nil
}

// isLost reports whether the server is known to have ended the lease g
// rests on.
func (e *Env) isLost(g lock.Grant) bool {
	return g.Lease != 0 && e.isLeaseLost(int64(g.Lease))
}

// describeErr names an error without anything that changes run to run.
func describeErr(err error) string {
	switch {
	case errors.Is(err, lock.ErrSessionExpired), errors.Is(err, rpctypes.ErrLeaseNotFound):
		return "error: session expired"
	case errors.Is(err, lock.ErrNotHeld):
		return "error: not held"
	case errors.Is(err, lock.ErrNoToken):
		return "error: no fencing token"
	case errors.Is(err, context.DeadlineExceeded):
		return "error: timed out"
	case errors.Is(err, context.Canceled):
		return "error: cancelled"
	case status.Code(err) == codes.Unavailable:
		return "error: connection lost"
	case errors.Is(err, cluster.ErrCrashed):
		return "error: crashed"
	}
	return "error: " + err.Error()
}

// Pause arms a pause of client at point and returns at once; the fault is
// applied through the nemesis (so it is on the timeline) and WaitPaused
// waits for it. Arming first is what makes a script deterministic: start the
// work that passes the point after this, and the worker cannot slip past.
func (e *Env) Pause(ctx context.Context, client, point string) (string, error) {
	w, err := e.worker(client)
	if err != nil {
		return "", err
	}
	if err := w.cl.Arm(point); err != nil {
		return "", err
	}
	w.pausing = make(chan pauseResult, 1)
	go func() {
		in, err := e.nemesis.Apply(e.background(ctx), faults.Fault{Kind: faults.PauseClient, Client: w.cl.Name(), Point: point})
		w.pausing <- pauseResult{in, err}
	}()
	return fmt.Sprintf("%s: will pause at %s", client, point), nil
}

type pauseResult struct {
	in  *faults.Injection
	err error
}

// WaitPaused waits until client's armed pause has stopped it.
func (e *Env) WaitPaused(ctx context.Context, client string) (string, error) {
	w, err := e.worker(client)
	if err != nil {
		return "", err
	}
	if w.pausing == nil {
		return "", fmt.Errorf("%s has no pause armed", client)
	}
	select {
	case r := <-w.pausing:
		w.pausing = nil
		if r.err != nil {
			return "", r.err
		}
		w.paused = r.in
		return fmt.Sprintf("%s: paused at %s, link cut", client, r.in.Target()), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Crash kills client as SIGKILL kills a process, and starts it again with
// nothing: see cluster.Client.Crash. Its lease lives on on the server until
// its TTL ends; whatever it had under way never completes.
func (e *Env) Crash(ctx context.Context, client string) (string, error) {
	w, err := e.worker(client)
	if err != nil {
		return "", err
	}
	if _, err := e.Fault(ctx, faults.Fault{Kind: faults.CrashClient, Client: client}); err != nil {
		return "", err
	}
	if w.paused != nil {
		// A pause ends with the process it froze: its window closes.
		err = w.paused.Undo(ctx)
		w.paused = nil
	}
	return crashOutput(client), err
}

// crashOutput is what a crash step prints.
func crashOutput(client string) string {
	return client + ": crashed, and started again holding nothing"
}

// Resume undoes Pause.
func (e *Env) Resume(ctx context.Context, client string) (string, error) {
	w, err := e.worker(client)
	if err != nil {
		return "", err
	}
	if w.paused == nil {
		return "", fmt.Errorf("%s is not paused", client)
	}
	err = w.paused.Undo(ctx)
	w.paused = nil
	return fmt.Sprintf("%s: resumed", client), err
}

// Fault applies a fault whose client names are the run's (c1), not the
// cluster's.
func (e *Env) Fault(ctx context.Context, f faults.Fault) (*faults.Injection, error) {
	if f.Client != "" {
		w, err := e.worker(f.Client)
		if err != nil {
			return nil, err
		}
		f.Client = w.cl.Name()
	}
	return e.nemesis.Apply(ctx, f)
}

// WaitLeaseGone waits until the server no longer has client's lease and
// records it on every history.
func (e *Env) WaitLeaseGone(ctx context.Context, client string) (string, error) {
	w, err := e.worker(client)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, faults.DefaultWait)
	defer cancel()
	lease := e.leaseOf(w)
	err = poll.Until(ctx, "the server to drop "+client+"'s lease", leasePoll, func(ctx context.Context) (bool, error) {
		return e.checkLease(ctx, client, lease)
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("server: %s's lease is gone", client), nil
}

// checkLease asks the server about one lease; the first time it is gone, a
// lease-lost event is recorded with the last time it was seen alive.
func (e *Env) checkLease(ctx context.Context, client string, lease clientv3.LeaseID) (bool, error) {
	e.mu.Lock()
	revoking := e.revoking[int64(lease)]
	e.mu.Unlock()
	if revoking {
		return false, nil // Expire records it
	}
	sent := time.Since(e.start)
	ttl, alive, err := e.c.LeaseTTL(ctx, lease)
	if err != nil {
		return false, err
	}
	if alive {
		e.mu.Lock()
		e.alive[int64(lease)] = max(e.alive[int64(lease)], int64(sent))
		if _, known := e.ttls[int64(lease)]; !known && ttl > 0 {
			e.ttls[int64(lease)] = ttl
		}
		e.mu.Unlock()
		return false, nil
	}
	e.mu.Lock()
	revoking = e.revoking[int64(lease)]
	e.mu.Unlock()
	if revoking {
		// A revoke began while the question was out, and the answer may
		// have come after it: Expire records the loss with the revoke's
		// time, later than this poll's last sighting.
		return false, nil
	}
	e.markLost(client, lease, time.Time{})
	return true, nil
}

// markLost records, once, that the server ended lease: now it is known
// gone; it was last known alive at aliveAt, or (zero) at the monitor's last
// sighting. The record says too when the client last sent the lease a
// keep-alive before that, and the TTL the server granted it.
func (e *Env) markLost(client string, lease clientv3.LeaseID, aliveAt time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lost[int64(lease)] {
		return
	}
	e.lost[int64(lease)] = true
	delete(e.leases, int64(lease))
	end := history.LeaseEnd{Client: client, Lease: int64(lease), TTL: e.ttls[int64(lease)],
		LastAlive: e.start.Add(time.Duration(e.alive[int64(lease)]))}
	if aliveAt.After(end.LastAlive) {
		end.LastAlive = aliveAt
	}
	if w, ok := e.clients[client]; ok {
		end.LastRenewal, _ = w.cl.LastRenewal(lease, end.LastAlive)
	}
	for _, r := range e.runs {
		r.rec.LeaseLost(end)
	}
}

// Expire ends client's lease on the server: by revoking it (the revoke's
// answer is the server's word that the lease was alive when it was sent and
// is gone now, so the loss is on the timeline exactly, however young the
// lease), or by cutting the client until the server lets it lapse.
func (e *Env) Expire(ctx context.Context, client, mode string) (string, error) {
	w, err := e.worker(client)
	if err != nil {
		return "", err
	}
	lease := e.leaseOf(w) // learned now: a waiter's lease may be younger than its Locker
	w.cl.SetLease(lease)  // the lease the fault ends
	sent := time.Now()
	if mode == faults.ModeRevoke {
		// The revoke's answer is the exact record of this loss: the
		// monitor must not record it first, from an older sighting.
		e.mu.Lock()
		e.revoking[int64(lease)] = true
		e.mu.Unlock()
		defer func() {
			e.mu.Lock()
			delete(e.revoking, int64(lease))
			e.mu.Unlock()
		}()
	}
	in, err := e.Fault(ctx, faults.Fault{Kind: faults.ExpireLease, Client: client, Mode: mode})
	if err != nil {
		return "", err
	}
	if mode == faults.ModeRevoke {
		if in.AlreadyGone() {
			sent = time.Time{} // it ended before the revoke: the monitor's last sighting is all we know
		}
		e.markLost(client, lease, sent)
	} else if _, err := e.checkLease(ctx, client, lease); err != nil {
		return "", err
	}
	return fmt.Sprintf("server: %s's lease ended (%s)", client, mode), nil
}

// monitorLeases watches every lease any client has had, until the server
// drops it or ctx ends, so that a lease that lapses during a fault is on the
// timeline even when no step waited for it — including one a client has
// already replaced after learning its session expired. Validity windows
// depend on it.
func (e *Env) monitorLeases(ctx context.Context) {
	t := time.NewTicker(leasePoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e.sweepLeases(ctx)
	}
}

// stallTick is how often the stall watcher runs; a gap of stallGap or more
// between two of its runs is recorded as a stall of the lab.
const (
	stallTick = 20 * time.Millisecond
	stallGap  = 250 * time.Millisecond
)

// watchStalls records, on every history, each time the lab's own process
// stood still for stallGap or more (starved of CPU, a stop-the-world
// pause): its clients and the embedded cluster stood still with it, so a
// lease that lapsed then is no finding against the lock (see
// history.ObservedStalled).
func (e *Env) watchStalls(ctx context.Context) {
	t := time.NewTicker(stallTick)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		if now.Sub(last) >= stallGap {
			for _, r := range e.runs {
				r.rec.ObserveStall(last)
			}
		}
		last = now
	}
}

// sweepLeases asks the server once about every lease not yet seen gone.
func (e *Env) sweepLeases(ctx context.Context) {
	type pair struct {
		client string
		lease  clientv3.LeaseID
	}
	e.mu.Lock()
	ws := make([]*worker, 0, len(e.order))
	for _, name := range e.order {
		ws = append(ws, e.clients[name])
	}
	e.mu.Unlock()
	for _, w := range ws {
		e.learn(w)
	}
	e.mu.Lock()
	var leases []pair
	for l, client := range e.leases {
		leases = append(leases, pair{client, clientv3.LeaseID(l)})
	}
	e.mu.Unlock()
	slices.SortFunc(leases, func(a, b pair) int { return int(a.lease - b.lease) })
	for _, p := range leases {
		e.checkLease(ctx, p.client, p.lease)
	}
}

// Clients lists the run's clients in creation order.
func (e *Env) Clients() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.order)
}

// isLeaseLost reports whether the server is known to have ended lease.
func (e *Env) isLeaseLost(lease int64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lost[lease]
}
