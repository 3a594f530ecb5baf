package pgrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/cluster/pgd"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/pglock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run/engine"
	"github.com/locklab/locklab/run/follow"
)

// scriptMembers is how many members the catalog's scripts name: every
// client talks to the one server, wherever a script says it lives.
const scriptMembers = 3

// Resources are the resources a PostgreSQL run protects: the lab's own
// counters, and pg-guarded, a counter in the same database written only
// while the grant's session holds its lock.
func Resources() []string { return append(engine.Counters(), pglock.GuardedResource) }

// Config describes a run.
type Config struct {
	Server *pgd.Server
	// Replica, if set, is Server's streaming replica: isolate holds the
	// replication, failover promotes it.
	Replica *pgd.Server
	// Pooler, if set, stands between the clients and Server: every
	// client's link reaches it (a lock whose Via is pglock.ViaPgBouncer).
	Pooler  *pgd.Pooler
	Factory pglock.Factory
	TTL     int    // seconds: the sessions' idle timeouts
	RunID   string // unique per run on the server: its locks' keys are made of it
	Sinks   []history.Sink
	// Resource names the resources; empty means Resources().
	Resource []string
	Minimum  *history.Minimum
	// OpTimeout bounds one acquire, critical section or release; zero
	// means run.DefaultOpTimeout.
	OpTimeout time.Duration
}

// Env is one run of a PostgreSQL lock: the engine's clients and histories
// on one server. Methods are safe for concurrent use by different
// clients; one client does one thing at a time.
type Env struct {
	*engine.Engine
	srv     *pgd.Server
	replica *pgd.Server
	pooler  *pgd.Pooler
	factory pglock.Factory
	key     int64 // the run's lock's advisory key

	mu      sync.Mutex
	watched follow.List[*watch]
	pids    map[string]int64 // each client's latest session, read off its link
	// conns are each client's own connections to the server, through its
	// link: pg-guarded's reads and writes go where its lock's do.
	conns map[string]*pgxpool.Pool
}

// New prepares a run; the engine sweeps its grants, recording on every
// history when a grant's session or lock leaves the server.
func New(cfg Config) (*Env, error) {
	if cfg.Server == nil || cfg.Factory == nil {
		return nil, errors.New("pgrun: a run needs a PostgreSQL server and a lock")
	}
	prefix := "locklab/runs/" + cfg.RunID + "/"
	res, err := engine.NewResources("PostgreSQL", cfg.Resource, Resources(), prefix+"counter")
	if err != nil {
		return nil, fmt.Errorf("pgrun: %w", err)
	}
	e := &Env{srv: cfg.Server, replica: cfg.Replica, pooler: cfg.Pooler, factory: cfg.Factory, pids: map[string]int64{}, conns: map[string]*pgxpool.Pool{}}
	if admin := cfg.Server.Admin(); admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := pglock.MakeCounters(ctx, admin)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("pgrun: pg-guarded's table: %w", err)
		}
	}
	opts := lock.Options{TTL: cfg.TTL, Prefix: prefix}
	e.key = pglock.Key("lock", opts)
	eng, err := engine.New(engine.Config{Store: store{e}, Resources: res, Sinks: cfg.Sinks, Minimum: cfg.Minimum,
		Options: opts, OpTimeout: cfg.OpTimeout, Sweep: e.sweep, StoreName: "PostgreSQL"})
	if err != nil {
		return nil, err
	}
	e.Engine = eng
	return e, nil
}

// store is the Env as the engine's Store.
type store struct{ e *Env }

// Links opens a client's link to the server.
func (s store) Links(_, member string) ([]*netproxy.Proxy, error) {
	if !slices.Contains(s.e.Members(), member) {
		return nil, fmt.Errorf("unknown member %q (members: %s)", member, strings.Join(s.e.Members(), ", "))
	}
	link := s.e.srv.Link
	if s.e.pooler != nil {
		link = s.e.pooler.Link
	}
	p, err := link()
	if err != nil {
		return nil, err
	}
	return []*netproxy.Proxy{p}, nil
}

// Locker makes a client's lock from its connection settings: its link,
// and idle timeouts of a TTL — the lease its sessions rest on.
func (s store) Locker(client string, links []*netproxy.Proxy) (lock.Locker, func() error, error) {
	cfg, err := ConnConfig(links[0].Addr(), s.e.TTLDuration())
	if err != nil {
		return nil, nil, err
	}
	pcfg, err := pgxpool.ParseConfig(pgd.ConnString(links[0].Addr()))
	if err != nil {
		return nil, nil, err
	}
	pcfg.MaxConns = 2
	pcfg.ConnConfig.RuntimeParams["application_name"] = labApplication
	if s.e.pooler != nil {
		// A pooler in transaction mode lends a server connection per
		// transaction: a prepared statement would not follow it.
		pcfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		return nil, nil, err
	}
	s.e.mu.Lock()
	s.e.conns[client] = pool
	s.e.mu.Unlock()
	done := func() error { pool.Close(); return nil }
	l, err := s.e.factory(cfg, "lock", s.e.Options())
	if err != nil {
		done()
		return nil, nil, err
	}
	return l, done, nil
}

// Conn is the client's own pool of connections through its link, for
// pg-guarded (engine.ConnStore).
func (s store) Conn(client string) resource.Conn {
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	if p := s.e.conns[client]; p != nil {
		return p
	}
	return nil
}

// ConnConfig is the connection settings of a client that reaches the
// server at addr, its sessions ended by the server once idle for ttl.
func ConnConfig(addr string, ttl time.Duration) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(pgd.ConnString(addr))
	if err != nil {
		return nil, err
	}
	ms := strconv.FormatInt(ttl.Milliseconds(), 10)
	cfg.RuntimeParams["idle_session_timeout"] = ms
	cfg.RuntimeParams["idle_in_transaction_session_timeout"] = ms
	cfg.RuntimeParams["application_name"] = "locklab"
	return cfg, nil
}

func (s store) Follow(client string, g lock.Grant) (int64, func(time.Time)) {
	return s.e.follow(client, g), nil
}
func (s store) Released(lease int64) bool                           { return s.e.released(lease) }
func (s store) Settle(ctx context.Context)                          { s.e.sweep(ctx) }
func (s store) Gone(ctx context.Context, lease int64) (bool, error) { return s.e.gone(ctx, lease) }
func (s store) Left(ctx context.Context) ([]string, error)          { return s.e.left(ctx) }

// Members names the members as a script does, m1…m3: every client talks
// to the one server.
func (e *Env) Members() []string {
	out := make([]string, scriptMembers)
	for i := range out {
		out[i] = fmt.Sprintf("m%d", i+1)
	}
	return out
}

// pidOf is client's latest session, read off its link (0: none yet).
func (e *Env) pidOf(client string) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.pids[client]
}

func (e *Env) setPid(client string, pid int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pids[client] = pid
}

// Close ends open faults, records each resource's final value, closes the
// run's clients and stops the sweep; the sessions' end frees their locks.
func (e *Env) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return e.Finish(ctx, func(ctx context.Context) error { e.sweep(ctx); return nil }, e.final)
}

// final reads a counter the run keeps in the database (pg-guarded).
func (e *Env) final(ctx context.Context, r resource.Resource) (int64, error) {
	admin := e.srv.Admin()
	if admin == nil {
		return 0, errors.New("postgres is down")
	}
	return r.Read(ctx, admin, lock.Grant{})
}
