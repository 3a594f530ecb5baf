package pgstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/cluster/pgd"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/pglock"
	"github.com/locklab/locklab/run/pgrun"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/script"
)

func init() { scenarios.Register(backend{}) }

// backend is PostgreSQL as a scenarios.Backend.
type backend struct{}

func (backend) Name() string { return pgrun.Store }

// kind is what PostgreSQL's locks run on and what its runs can do; its
// scripts' output is pg-session's.
var kind = scenarios.StoreKind{Name: pgrun.Store, Label: pgrun.Label, Can: pgrun.Capabilities(), Shows: "pg-session"}

func (backend) Kind() scenarios.StoreKind { return kind }

// pooledKind is what a lock behind PgBouncer in transaction mode runs on:
// the server's sessions are the pooler's, not the clients', so the lab
// cannot end a client's session, nor a keep-alive tell a client its own
// ended, and the replica's faults are not wired through the pooler.
var pooledKind = scenarios.StoreKind{Name: pgrun.Store, Label: "a PostgreSQL server behind PgBouncer in transaction mode",
	Can: script.Capabilities{script.OneStore: "one server, its sessions the pooler's: each client's statements run on " +
		"whichever server connection the pool lends"}, Shows: "pg-pooled"}

func (backend) Names() []string {
	var out []string
	for _, l := range pglock.Locks() {
		out = append(out, l.Name)
	}
	return out
}

func (backend) About() (on, needs string) { return "real PostgreSQL", "postgresql" }

func (backend) Locks() []lock.Description {
	var out []lock.Description
	for _, l := range pglock.Locks() {
		out = append(out, l.Description())
	}
	return out
}

func (backend) Lock(name string) (scenarios.BackendLock, bool) {
	l, err := pglock.Find(name)
	if err != nil {
		return scenarios.BackendLock{}, false
	}
	bl := describe(l.Factory, l.Weak)
	if l.Via == pglock.ViaPgBouncer {
		bl.Kind = pooledKind
		bl.Store = func(own scenarios.Servers, _ scenarios.GrantShape) scenarios.Store {
			s, _ := own.(*shared)
			return pgStore{factory: l.Factory, shared: s, pooled: true}
		}
	}
	return bl, true
}

// Exec is a user's PostgreSQL lock run as a process (see
// pglock.EnvPostgres), on the run's server; it is documented to fail
// nothing. Its preflight asks it again while it holds (scenarios.Reask).
func (b backend) Exec(command string) (scenarios.BackendLock, error) {
	f, err := pglock.Exec(command)
	if err != nil {
		return scenarios.BackendLock{}, err
	}
	l := describe(f, nil)
	l.Preflight = func(ctx context.Context, _ scenarios.Servers) (scenarios.GrantShape, error) {
		return preflight(ctx, f, true)
	}
	return l, nil
}

// Adopt is a user's Go lock on PostgreSQL (a pglock.Factory); it is
// documented to fail nothing.
func (b backend) Adopt(factory any) (scenarios.BackendLock, error) {
	f, ok := factory.(pglock.Factory)
	if !ok || f == nil {
		return scenarios.BackendLock{}, fmt.Errorf("the %s store takes a lock.Factory[*pgx.ConnConfig], not a %T", b.Name(), factory)
	}
	l := describe(f, nil)
	l.Preflight = func(ctx context.Context, _ scenarios.Servers) (scenarios.GrantShape, error) {
		return preflight(ctx, f, false)
	}
	return l, nil
}

func (backend) Regressions() []lock.Regression { return pglock.Regressions() }

// describe is the lock f makes as a scenarios.BackendLock, documented to
// fail the lessons weak names.
func describe(f pglock.Factory, weak map[string]string) scenarios.BackendLock {
	return scenarios.BackendLock{Kind: kind, Weak: slices.Sorted(maps.Keys(weak)),
		Store: func(own scenarios.Servers, _ scenarios.GrantShape) scenarios.Store {
			s, _ := own.(*shared)
			return pgStore{factory: f, shared: s}
		}}
}

// preflight has the lock acquire and release once alone on a server of
// its own, and says whether its grant carried a token; a lock run as a
// process (reask) is then asked to acquire while it holds a grant the lab
// ended (scenarios.Reask).
func preflight(ctx context.Context, f pglock.Factory, reask bool) (scenarios.GrantShape, error) {
	srv, err := pgd.Start(ctx, pgd.Options{})
	if err != nil {
		return scenarios.GrantShape{}, fmt.Errorf("preflight: the scratch PostgreSQL: %w", err)
	}
	defer srv.Close()
	cfg, err := pgrun.ConnConfig(srv.Addr(), 10*time.Second)
	if err != nil {
		return scenarios.GrantShape{}, err
	}
	l, err := f(cfg, "preflight", lock.Options{Prefix: "locklab/preflight/"})
	if err != nil {
		return scenarios.GrantShape{}, fmt.Errorf("preflight: %w", err)
	}
	defer l.Close()
	actx, cancel := context.WithTimeout(ctx, scenarios.PreflightTimeout)
	defer cancel()
	g, err := l.Acquire(actx)
	if err != nil {
		return scenarios.GrantShape{}, fmt.Errorf("preflight: acquire, alone on a PostgreSQL of its own: %w", err)
	}
	if err := l.Release(actx, g); actx.Err() != nil {
		return scenarios.GrantShape{}, fmt.Errorf("preflight: release, alone on a PostgreSQL of its own, did not return: %w", err)
	}
	if reask {
		if err := scenarios.Reask(ctx, l, ender{srv}); err != nil {
			return scenarios.GrantShape{}, err
		}
	}
	return scenarios.ShapeOf(l, g), nil
}

// ender ends a grant on PostgreSQL (the session holding its advisory lock
// terminated, as its end would be) and reads whether a grant is held: its
// key held by a session.
type ender struct{ srv *pgd.Server }

func (e ender) End(ctx context.Context, g lock.Grant) error {
	key, err := pglock.ParseKey(g.Key)
	if err != nil {
		return err
	}
	_, err = e.srv.Admin().Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE granted AND `+pglock.OnKey("$1"), key)
	return err
}

func (e ender) Holds(ctx context.Context, g lock.Grant) (bool, error) {
	key, err := pglock.ParseKey(g.Key)
	if err != nil {
		return false, err
	}
	var held bool
	err = e.srv.Admin().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE granted AND `+pglock.OnKey("$1")+`)`, key).Scan(&held)
	return held, err
}

// pgStore runs a configuration on the run's shared server (one started
// for it where nothing is shared).
type pgStore struct {
	factory pglock.Factory
	shared  *shared
	// pooled puts PgBouncer in transaction mode between the clients and
	// the server (pglock.ViaPgBouncer).
	pooled bool
}

func (st pgStore) Skip(scenarios.Scenario) string {
	if _, err := pgd.Find(); err != nil {
		return fmt.Sprintf("%v: the PostgreSQL locks were not run", err)
	}
	if _, err := pgd.FindPooler(); st.pooled && err != nil {
		return fmt.Sprintf("%v: the locks behind it were not run", err)
	}
	return ""
}

func (pgStore) Members() int { return 3 }

func (pgStore) Resources(asked []string) ([]string, map[string]string) {
	var ran []string
	skipped := map[string]string{}
	for _, r := range asked {
		if slices.Contains(pgrun.Resources(), r) {
			ran = append(ran, r)
		} else {
			skipped[r] = scenarios.KeptElsewhere(r, kind.Label)
		}
	}
	return ran, skipped
}

func (st pgStore) Open(ctx context.Context, cfg scenarios.EngineConfig) (scenarios.Engine, func() error, error) {
	srv, replica, closeIt, id, err := st.server(ctx, cfg.RunID, cfg.FaultsMembers)
	if err != nil {
		return nil, nil, err
	}
	var pooler *pgd.Pooler
	if st.pooled {
		if pooler, err = pgd.StartPooler(ctx, srv, pgd.Options{}); err != nil {
			closeIt()
			return nil, nil, err
		}
		closeServers := closeIt
		closeIt = func() error { return errors.Join(pooler.Close(), closeServers()) }
	}
	env, err := pgrun.New(pgrun.Config{Server: srv, Replica: replica, Pooler: pooler, Factory: st.factory, TTL: cfg.TTL, RunID: id,
		Sinks: cfg.Sinks, Resource: cfg.Resources, Minimum: cfg.Minimum, OpTimeout: cfg.OpTimeout})
	if err != nil {
		closeIt()
		return nil, nil, err
	}
	return env, func() error { return errors.Join(env.Close(), closeIt()) }, nil
}

// server is the server a configuration runs on: the run's shared one
// (under a run id of its own), or one started for it — with a streaming
// replica, for a lesson that faults the servers (isolate, failover).
func (st pgStore) server(ctx context.Context, runID string, faultsServers bool) (srv, replica *pgd.Server, _ func() error, _ string, err error) {
	if st.shared != nil && !faultsServers {
		srv, err := st.shared.get(ctx)
		return srv, nil, func() error { return nil }, st.shared.runID(runID), err
	}
	if srv, err = pgd.Start(ctx, pgd.Options{}); err != nil {
		return nil, nil, nil, "", err
	}
	if !faultsServers {
		return srv, nil, srv.Close, runID, nil
	}
	if replica, err = srv.StartReplica(ctx, pgd.Options{}); err != nil {
		srv.Close()
		return nil, nil, nil, "", fmt.Errorf("the streaming replica: %w", err)
	}
	return srv, replica, func() error { return errors.Join(replica.Close(), srv.Close()) }, runID, nil
}

// Share is the server the configurations of one run share (see
// scenarios.Sharing): started once, when the first configuration asks.
func (backend) Share() scenarios.Servers { return &shared{} }

// shared is one run's server, started on first use; each configuration
// locks a key of its own there (runID).
type shared struct {
	mu     sync.Mutex
	srv    *pgd.Server
	closed bool
	runs   atomic.Int64
}

func (s *shared) get(ctx context.Context) (*pgd.Server, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, errors.New("pgstore: the run's server is closed")
	case s.srv == nil:
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		srv, err := pgd.Start(ctx, pgd.Options{})
		if err != nil {
			return nil, err
		}
		s.srv = srv
	}
	return s.srv, nil
}

// runID is id made unique on the server: a configuration run again must
// not meet the sessions its first attempt may still hold.
func (s *shared) runID(id string) string { return fmt.Sprintf("%s-%d", id, s.runs.Add(1)) }

func (s *shared) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}
