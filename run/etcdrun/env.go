package etcdrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults/etcdfaults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	_ "github.com/locklab/locklab/lock/etcdlock" // registers etcd-guarded, the resource an etcd run keeps
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/run/engine"
)

// leasePoll is how often a wait asks the server about a lease.
const leasePoll = engine.SweepEvery

// Env is one run of a lock on an etcd cluster: the engine's clients and
// histories (run/engine), each client a cluster.Client behind a link of
// its own, and the three protected resources, all on one clock. Every
// critical section writes to all three resources, so one run gives a
// verdict for each. Methods are safe for concurrent use by different
// clients; one client does one thing at a time.
type Env struct {
	*engine.Engine
	c       *cluster.Cluster
	nemesis *etcdfaults.Nemesis
	factory etcdlock.Factory
	start   time.Time
	runs    run.Histories

	mu      sync.Mutex
	conns   map[string]*conn
	lost    map[int64]bool          // leases already recorded as lost
	alive   map[int64]int64         // lease → last time (run clock) it was seen alive
	ttls    map[int64]time.Duration // lease → the TTL the server granted it
	leases  map[int64]string        // every lease a client has had and not yet lost → client
	learned map[string]int          // client → how many of its lease grants the sweep has taken in
	// revoking are the leases Expire is revoking: it records their loss.
	revoking map[int64]bool
	// asked is when (run clock) a release of a grant on each lease was
	// last asked: a lease that ends after is the release's doing.
	asked map[int64]time.Duration
}

// conn is what the run keeps of one client of etcd's.
type conn struct {
	cl *cluster.Client
	// locker is the latest lock the factory made for the client.
	locker lock.Locker
	// making is the lock's factory still at work for the client, after
	// the engine gave up waiting for it (nil: none; see makeLocker).
	making chan made
	// unwatchable: the held grant's token is not its key's create
	// revision, so the key on the server says nothing about the grant.
	unwatchable bool
	// closed: the client is closed (closeClient).
	closed bool
}

// Config describes a run.
type Config struct {
	Cluster  *cluster.Cluster
	Factory  etcdlock.Factory
	TTL      int
	RunID    string // unique per run within the cluster: keys live under it
	Sinks    []history.Sink
	Resource []string // resource names; empty means Resources()
	// Minimum is the progress the run must make (see history.Minimum);
	// nil states none.
	Minimum *history.Minimum
	// OpTimeout bounds one acquire, critical section or release; zero
	// means DefaultOpTimeout.
	OpTimeout time.Duration
}

// Resources are the resources an etcd run protects: the lab's own
// counters, and etcd-guarded, a counter in etcd written only while the
// writer's lock key is unchanged.
func Resources() []string { return append(engine.Counters(), etcdlock.GuardedResource) }

// New prepares a run. The engine sweeps every lease a client has had,
// recording on every history when the server stops knowing it, and the
// run watches the members' leaders.
func New(cfg Config) (*Env, error) {
	if cfg.Cluster == nil || cfg.Factory == nil {
		return nil, errors.New("etcdrun: a run needs a cluster and a lock")
	}
	prefix := "locklab/runs/" + cfg.RunID + "/"
	res, err := engine.NewResources("etcd", cfg.Resource, Resources(), prefix+"counter")
	if err != nil {
		return nil, fmt.Errorf("etcdrun: %w", err)
	}
	e := &Env{
		c:        cfg.Cluster,
		factory:  cfg.Factory,
		start:    time.Now(),
		conns:    map[string]*conn{},
		lost:     map[int64]bool{},
		alive:    map[int64]int64{},
		ttls:     map[int64]time.Duration{},
		leases:   map[int64]string{},
		learned:  map[string]int{},
		revoking: map[int64]bool{},
		asked:    map[int64]time.Duration{},
	}
	eng, err := engine.New(engine.Config{Store: store{e}, Resources: res, Sinks: cfg.Sinks, Minimum: cfg.Minimum,
		Options: lock.Options{TTL: cfg.TTL, Prefix: prefix}, OpTimeout: cfg.OpTimeout, StoreName: "etcd",
		Sweep: func(ctx context.Context) { e.sweepLeases(ctx) }, Watch: e.watchLeaders})
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.Engine, e.runs = eng, eng.Histories()
	e.mu.Unlock()
	e.nemesis = etcdfaults.NewOn(cfg.Cluster, eng.Windows(), e.clientName)
	return e, nil
}

// Members names the cluster's members, in order.
func (e *Env) Members() []string { return e.c.Members() }

// Close undoes active faults, takes a last look at every lease, records
// each resource's final value, closes the run's lockers and clients and,
// on a cluster the lab does not own, removes every key the run wrote.
func (e *Env) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs := []error{e.Finish(ctx, e.settle, e.final)}
	for _, name := range e.connected() {
		errs = append(errs, e.closeClient(name)) // one whose lock was never made
		errs = append(errs, e.dropMaking(ctx, name))
	}
	if e.c.IsExternal() {
		// A user's own cluster is left as it was found: the run's keys (its
		// counter, what its lockers left) go. An embedded one goes whole.
		prefix := e.Options().Prefix
		if _, err := e.c.Admin().Delete(ctx, prefix, clientv3.WithPrefix()); err != nil {
			errs = append(errs, fmt.Errorf("removing the run's keys (%s…) from the cluster: %w", prefix, err))
		}
	}
	return errors.Join(errs...)
}

// settle is one last look at every lease not yet seen gone, before the
// lockers revoke theirs: a lease that lapsed just before the run ended must
// be on the timeline, or its holder's validity would seem to run on. A
// question a busy server left unanswered is asked again.
func (e *Env) settle(context.Context) error {
	ctx, cancel := context.WithTimeout(context.Background(), settleWait)
	defer cancel()
	return e.settleLeases(ctx)
}

// final reads a resource the cluster keeps, through the lab's admin
// client, without taking part in the workload.
func (e *Env) final(ctx context.Context, r resource.Resource) (int64, error) {
	return r.Read(ctx, e.c.Admin(), lock.Grant{})
}

// closeClient closes client's connection to the cluster, once.
func (e *Env) closeClient(client string) error {
	e.mu.Lock()
	cn := e.conns[client]
	closed := cn == nil || cn.closed
	if cn != nil {
		cn.closed = true
	}
	e.mu.Unlock()
	if closed {
		return nil
	}
	return e.c.CloseClient(e.clientName(client))
}

// clientName makes the cluster-wide client name; runs share a cluster.
func (e *Env) clientName(name string) string { return e.Options().Prefix + name }

// conn is client's connection state; nil for a client the run has not.
func (e *Env) conn(client string) *conn {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.conns[client]
}

// connected names every client that has a connection, even one whose
// lock was never made (AddClient failed), in name order.
func (e *Env) connected() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Sorted(maps.Keys(e.conns))
}

// memberOf is the member client talks to.
func (e *Env) memberOf(client string) string {
	if cn := e.conn(client); cn != nil {
		return cn.cl.Member()
	}
	return ""
}

// clientsOn lists the run's clients that talk to the cluster through
// member, in creation order.
func (e *Env) clientsOn(member string) []string {
	var out []string
	for _, name := range e.Clients() {
		if e.memberOf(name) == member {
			out = append(out, name)
		}
	}
	return out
}

// unknown is the error for a client the run does not have.
func (e *Env) unknown(client string) error {
	return fmt.Errorf("unknown client %q (clients: %s)", client, strings.Join(e.Clients(), ", "))
}
