package zkrun

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

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/lock/zklock"
	"github.com/locklab/locklab/run/engine"
	"github.com/locklab/locklab/run/follow"
)

// Resources are the resources a ZooKeeper run protects: the lab's own
// counters and, for a Go lock (not one run as a process: exec), zk-guarded,
// a counter node written through the client's own connection only while
// its lock node stands. A lock run as a process makes its own session,
// and the lab has no connection through its link to write with.
func Resources(exec bool) []string {
	if exec {
		return engine.Counters()
	}
	return append(engine.Counters(), zklock.GuardedResource)
}

// Config describes a run.
type Config struct {
	Ensemble *zkd.Ensemble
	// Factory is a Go lock's, on a session the lab makes for each client;
	// Exec, instead, a lock run as a process, which makes its own.
	Factory zklock.Factory
	Exec    zklock.ExecFactory
	TTL     int    // seconds: each client's session timeout
	RunID   string // unique per run within the ensemble: nodes live under it
	Sinks   []history.Sink
	// Resource names the resources; empty means Resources().
	Resource []string
	Minimum  *history.Minimum
	// OpTimeout bounds one acquire, critical section or release; zero
	// means run.DefaultOpTimeout.
	OpTimeout time.Duration
}

// Env is one run of a ZooKeeper lock: the engine's clients and histories
// on an ensemble.
type Env struct {
	*engine.Engine
	ens     *zkd.Ensemble
	factory zklock.Factory
	exec    zklock.ExecFactory

	mu      sync.Mutex
	watched follow.List[*watch]
	// sessions are each client's latest session, read off its links
	// (Answers): a lock run as a process makes its own.
	sessions map[string]int64
	made     map[string]bool // clients whose lock was made
	// waiting reports, for each client's latest connection, whether the
	// client waits on it (see Queued).
	waiting map[string]func() bool
	// faulted is the server the latest fault of a server killed or cut
	// off ("": none yet): the one wait-served waits for others to serve
	// without.
	faulted string
	// conns are each Go lock's client's connection, through its links:
	// zk-guarded's reads and writes go where its lock's do.
	conns map[string]*zk.Conn
}

// New prepares a run; the engine sweeps its grants.
func New(cfg Config) (*Env, error) {
	if cfg.Ensemble == nil || (cfg.Factory == nil) == (cfg.Exec == nil) {
		return nil, errors.New("zkrun: a run needs an ensemble and a lock")
	}
	prefix := "locklab/runs/" + cfg.RunID + "/"
	res, err := engine.NewResources("ZooKeeper", cfg.Resource, Resources(cfg.Exec != nil), prefix+"counter")
	if err != nil {
		return nil, fmt.Errorf("zkrun: %w", err)
	}
	e := &Env{ens: cfg.Ensemble, factory: cfg.Factory, exec: cfg.Exec, sessions: map[string]int64{}, made: map[string]bool{},
		waiting: map[string]func() bool{}, conns: map[string]*zk.Conn{}}
	eng, err := engine.New(engine.Config{Store: store{e}, Resources: res, Sinks: cfg.Sinks, Minimum: cfg.Minimum,
		Options:   lock.Options{TTL: cfg.TTL, Prefix: prefix},
		OpTimeout: cfg.OpTimeout, Sweep: e.sweep, StoreName: "ZooKeeper"})
	if err != nil {
		return nil, err
	}
	e.Engine = eng
	return e, nil
}

// store is the Env as the engine's Store.
type store struct{ e *Env }

// Links opens a client's links to every server, its member's first: the
// client keeps to it while it serves, as a client given the ensemble does.
func (s store) Links(_, member string) ([]*netproxy.Proxy, error) {
	home, err := s.e.member(member)
	if err != nil {
		return nil, err
	}
	n := len(s.e.ens.Names())
	return engine.OpenLinks(n, func(k int) (*netproxy.Proxy, error) { return s.e.ens.Link((home + k) % n) })
}

// Locker makes a client's lock on a session of its own over its links,
// its timeout the run's TTL. A client's first is made once the ensemble
// has given it its session, as "connected" says: a fresh ensemble's JVMs
// take seconds over their first requests, and a waiter's first acquire
// would otherwise pay for that against its deadline — not the lock's
// doing. (One made again after a crash is made at once: its links may be
// cut still.)
func (s store) Locker(client string, links []*netproxy.Proxy) (lock.Locker, func() error, error) {
	addrs := make([]string, len(links))
	for i, p := range links {
		addrs[i] = p.Addr()
	}
	if s.e.exec != nil {
		l, err := s.e.exec(addrs, "lock", s.e.Options())
		return l, nil, err
	}
	c, _, err := zk.Connect(addrs, s.e.TTLDuration(), zk.WithLogger(zkd.Silent{}), zk.WithHostProvider(&inOrder{}))
	if err != nil {
		return nil, nil, err
	}
	done := func() error { c.Close(); return nil }
	if s.e.firstLocker(client) {
		ctx, cancel := context.WithTimeout(context.Background(), sessionWait)
		err := poll.Until(ctx, client+"'s session", 10*time.Millisecond, func(context.Context) (bool, error) {
			return c.State() == zk.StateHasSession, nil
		})
		cancel()
		if err != nil {
			done()
			return nil, nil, err
		}
	}
	l, err := s.e.factory(c, "lock", s.e.Options())
	if err != nil {
		done()
		return nil, nil, err
	}
	s.e.mu.Lock()
	s.e.conns[client] = c
	s.e.mu.Unlock()
	return l, done, nil
}

// Granted looks at a grant's node once it is recorded: one that no session
// owns (a persistent node) rests on no lease — a holder that dies keeps
// the lock for ever — and the history says so (history.ObservedLeaseless).
func (s store) Granted(_ context.Context, client string, g lock.Grant) {
	if g.Key == "" {
		return
	}
	ok, st, err := s.e.ens.Admin().Exists(g.Key)
	if err == nil && ok && st.EphemeralOwner == 0 {
		s.e.Histories().Leaseless(client, g.Token)
	}
}

// Conn is the client's own connection, for zk-guarded (nil for a lock run
// as a process, which makes its own).
func (s store) Conn(client string) resource.Conn {
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	if c := s.e.conns[client]; c != nil {
		return c
	}
	return nil
}

func (s store) Follow(client string, g lock.Grant) (int64, func(time.Time)) {
	return s.e.follow(client, g), nil
}
func (s store) Released(lease int64) bool                           { return s.e.released(lease) }
func (s store) Settle(ctx context.Context)                          { s.e.sweep(ctx) }
func (s store) Gone(ctx context.Context, lease int64) (bool, error) { return s.e.gone(ctx, lease) }
func (s store) Left(ctx context.Context) ([]string, error)          { return s.e.nodesLeft(ctx) }

// Queued reports whether client, on its latest connection, has had every
// request answered and set a watch with the latest (zkd.Waits): a recipe's
// waiter has asked all it asks before it waits.
func (s store) Queued(_ context.Context, client string) (bool, error) {
	s.e.mu.Lock()
	waiting := s.e.waiting[client]
	s.e.mu.Unlock()
	return waiting != nil && waiting(), nil
}

// Wire reads a client connection's answers for the session the ensemble
// gave it (see zkd.Session), both its directions for whether the client
// waits (see Queued), and its requests, each a keep-alive of the grants
// resting on that session (see zkd.Frames), timed as sent.
func (s store) Wire(client string) (requests, answers func([]byte)) {
	var id atomic.Int64 // the connection's session, once the ensemble named it
	session := zkd.Session(func(sid int64) {
		id.Store(sid)
		s.e.mu.Lock()
		s.e.sessions[client] = sid
		s.e.mu.Unlock()
	})
	asked, answered, waiting := zkd.Waits()
	sent := zkd.Frames()
	s.e.mu.Lock()
	s.e.waiting[client] = waiting
	s.e.mu.Unlock()
	return func(b []byte) {
			asked(b)
			if b != nil && sent(b) {
				if sid := id.Load(); sid != 0 {
					s.e.watched.Renewed(client, sid, time.Now())
				}
			}
		}, func(b []byte) {
			session(b)
			answered(b)
		}
}

// sessionWait bounds how long a client's first session may take.
const sessionWait = 30 * time.Second

// firstLocker reports whether client's lock is made for the first time.
func (e *Env) firstLocker(client string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.made[client] {
		return false
	}
	e.made[client] = true
	return true
}

// sessionOf is client's latest session, as read off its links; zero
// before its first connection was answered.
func (e *Env) sessionOf(client string) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sessions[client]
}

// Members names the servers as a script does, m1…mN.
func (e *Env) Members() []string {
	out := make([]string, len(e.ens.Names()))
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

// lockPath is where the run's lock keeps its nodes.
func (e *Env) lockPath() string { return zklock.Path("lock", e.Options()) }

// Close ends open faults, records each resource's final value, closes the
// run's clients and removes the run's nodes.
func (e *Env) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(e.Finish(ctx, func(ctx context.Context) error { e.sweep(ctx); return nil }, e.final), e.removeNodes())
}

// final reads a counter the run keeps in ZooKeeper (zk-guarded).
func (e *Env) final(ctx context.Context, r resource.Resource) (int64, error) {
	return r.Read(ctx, e.ens.Admin(), lock.Grant{})
}

// removeNodes deletes the run's lock nodes and their parent; where it
// cannot because a server died during the run by no fault of the lab's,
// it says so, with what the server printed last.
func (e *Env) removeNodes() error {
	err := e.deleteNodes()
	if err == nil {
		return nil
	}
	var died []error
	for i, name := range e.ens.Names() {
		if dead, last := e.ens.Died(i); dead {
			died = append(died, fmt.Errorf("zookeeper server %s died during the run, not by a fault of the lab's (its last "+
				"output: %s)", name, cmp.Or(last, "none")))
		}
	}
	if len(died) > 0 {
		return errors.Join(died...)
	}
	return err
}

// deleteNodes deletes the run's lock nodes.
func (e *Env) deleteNodes() error {
	admin := e.ens.Admin()
	children, _, err := admin.Children(e.lockPath())
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing the run's nodes: %w", err)
	}
	for _, ch := range children {
		if err := admin.Delete(e.lockPath()+"/"+ch, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("removing the run's nodes: %w", err)
		}
	}
	counter := zklock.Path("counter", e.Options()) // zk-guarded's
	if err := admin.Delete(counter, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("removing the run's nodes: %w", err)
	}
	return nil
}

// inOrder hands a client its servers in the order given, its member's
// first (go-zookeeper's own provider shuffles them): after a failure, the
// next.
type inOrder struct {
	mu         sync.Mutex
	servers    []string
	curr, last int
}

// Init takes the servers, in order.
func (h *inOrder) Init(servers []string) error {
	h.servers, h.curr, h.last = servers, -1, -1
	return nil
}

// Len is how many servers there are.
func (h *inOrder) Len() int { return len(h.servers) }

// Next is the server after the last tried; retryStart says every server
// was tried since the last connection.
func (h *inOrder) Next() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.curr = (h.curr + 1) % len(h.servers)
	retry := h.curr == h.last
	if h.last == -1 {
		h.last = 0
	}
	return h.servers[h.curr], retry
}

// Connected notes that the last server tried took the connection.
func (h *inOrder) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = h.curr
}
