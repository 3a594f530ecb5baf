package zkstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/internal/clockshim"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/zklock"
	"github.com/locklab/locklab/run/zkrun"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/script"
)

func init() { scenarios.Register(backend{}) }

// members is the size of the ensemble a run starts, as etcd's three.
const members = 3

// backend is ZooKeeper as a scenarios.Backend.
type backend struct{}

func (backend) Name() string { return zkrun.Store }

// kind is what ZooKeeper's locks run on and what its runs can do; its
// scripts' output is zk-herd's (zk-lock's documented FAIL is a lesson of
// ZooKeeper's own, lost-request).
var kind = scenarios.StoreKind{Name: zkrun.Store, Label: zkrun.Label, Can: zkrun.Capabilities(), Shows: "zk-herd"}

func (backend) Kind() scenarios.StoreKind { return kind }

func (backend) Names() []string {
	var out []string
	for _, l := range zklock.Locks() {
		out = append(out, l.Name)
	}
	return out
}

func (backend) About() (on, needs string) { return "real ZooKeeper", "zookeeperd" }

func (backend) Locks() []lock.Description {
	var out []lock.Description
	for _, l := range zklock.Locks() {
		out = append(out, l.Description())
	}
	return out
}

func (backend) Lock(name string) (scenarios.BackendLock, bool) {
	l, err := zklock.Find(name)
	if err != nil {
		return scenarios.BackendLock{}, false
	}
	return describe(l.Factory, l.Weak), true
}

// Exec is a user's ZooKeeper lock run as a process (see zklock.EnvZooKeeper),
// on an ensemble started for each configuration; it is documented to fail
// nothing.
func (b backend) Exec(command string) (scenarios.BackendLock, error) {
	f, err := zklock.Exec(command)
	if err != nil {
		return scenarios.BackendLock{}, err
	}
	l := scenarios.BackendLock{Kind: kind,
		Store: func(own scenarios.Servers, _ scenarios.GrantShape) scenarios.Store {
			return zkStore{exec: f, shared: sharedOf(own)}
		}}
	l.Preflight = func(ctx context.Context, _ scenarios.Servers) (scenarios.GrantShape, error) {
		return preflight(ctx, true, func(ens *zkd.Ensemble) (lock.Locker, func(), error) {
			l, err := f(ens.Addrs(), "preflight", lock.Options{Prefix: "locklab/preflight/"})
			return l, func() {}, err
		})
	}
	return l, nil
}

// Adopt is a user's Go lock on ZooKeeper (a zklock.Factory); it is
// documented to fail nothing.
func (b backend) Adopt(factory any) (scenarios.BackendLock, error) {
	f, ok := factory.(zklock.Factory)
	if !ok || f == nil {
		return scenarios.BackendLock{}, fmt.Errorf("the %s store takes a lock.Factory[*zk.Conn], not a %T", b.Name(), factory)
	}
	l := describe(f, nil)
	l.Preflight = func(ctx context.Context, _ scenarios.Servers) (scenarios.GrantShape, error) {
		return preflight(ctx, false, func(ens *zkd.Ensemble) (lock.Locker, func(), error) {
			c, _, err := zk.Connect(ens.Addrs(), 10*time.Second, zk.WithLogger(zkd.Silent{}))
			if err != nil {
				return nil, nil, err
			}
			l, err := f(c, "preflight", lock.Options{Prefix: "locklab/preflight/"})
			return l, c.Close, err
		})
	}
	return l, nil
}

func (backend) Regressions() []lock.Regression { return zklock.Regressions() }

// describe is the lock f makes as a scenarios.BackendLock, documented to
// fail the lessons weak names.
func describe(f zklock.Factory, weak map[string]string) scenarios.BackendLock {
	lessons := slices.Sorted(maps.Keys(weak))
	return scenarios.BackendLock{Kind: kind, Weak: lessons,
		Store: func(own scenarios.Servers, _ scenarios.GrantShape) scenarios.Store {
			return zkStore{factory: f, shared: sharedOf(own)}
		}}
}

// sharedOf is the run's shared ensemble own is (nil: none, each
// configuration starts its own).
func sharedOf(own scenarios.Servers) *shared {
	s, _ := own.(*shared)
	return s
}

// preflight has one Locker that open makes acquire and release once on an
// ensemble of one started for it, and says whether its grant carried a
// token; a lock run as a process (reask) is then asked to acquire while
// it holds a grant the lab ended (scenarios.Reask).
func preflight(ctx context.Context, reask bool, open func(*zkd.Ensemble) (lock.Locker, func(), error)) (scenarios.GrantShape, error) {
	ens, err := zkd.Start(ctx, 1, zkd.Options{})
	if err != nil {
		return scenarios.GrantShape{}, fmt.Errorf("preflight: the scratch ZooKeeper: %w", err)
	}
	defer ens.Close()
	l, done, err := open(ens)
	if err != nil {
		return scenarios.GrantShape{}, fmt.Errorf("preflight: %w", err)
	}
	defer done()
	defer l.Close()
	actx, cancel := process.WithStartup(ctx, scenarios.PreflightTimeout-process.StartupAllowance)
	defer cancel()
	g, err := l.Acquire(actx)
	if err != nil {
		return scenarios.GrantShape{}, fmt.Errorf("preflight: acquire, alone on a ZooKeeper of its own: %w", err)
	}
	if err := l.Release(actx, g); actx.Err() != nil {
		return scenarios.GrantShape{}, fmt.Errorf("preflight: release, alone on a ZooKeeper of its own, did not return: %w", err)
	}
	if reask {
		if err := scenarios.Reask(ctx, l, ender{ens.Admin()}); err != nil {
			return scenarios.GrantShape{}, err
		}
	}
	shape := scenarios.ShapeOf(l, g)
	shape.Key = true
	return shape, nil
}

// ender ends a grant on ZooKeeper (its node deleted, as its session's end
// would) and reads whether a grant is held: its node there, created at its
// token.
type ender struct{ c *zk.Conn }

func (e ender) End(_ context.Context, g lock.Grant) error {
	if err := e.c.Delete(g.Key, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}

func (e ender) Holds(_ context.Context, g lock.Grant) (bool, error) {
	ok, stat, err := e.c.Exists(g.Key)
	if err != nil {
		return false, err
	}
	return ok && (g.Token == 0 || stat.Czxid == g.Token), nil
}

// zkStore runs a configuration on an ensemble of three — the run's shared
// one, or one started for it when the scenario faults a server or nothing
// is shared: of a Go lock (factory) or of a lock run as a process (exec).
type zkStore struct {
	factory zklock.Factory
	exec    zklock.ExecFactory
	shared  *shared
}

func (zkStore) Skip(s scenarios.Scenario) string {
	if _, _, err := zkd.Find(); err != nil {
		return fmt.Sprintf("%v: the ZooKeeper locks were not run", err)
	}
	if slices.Contains(s.Needs(), script.JumpClock) {
		if _, err := clockshim.Build(context.Background()); err != nil {
			return fmt.Sprintf("%v: the lab cannot move ZooKeeper's clock", err)
		}
	}
	return ""
}

func (zkStore) Members() int { return members }

func (st zkStore) Resources(asked []string) ([]string, map[string]string) {
	var ran []string
	skipped := map[string]string{}
	for _, r := range asked {
		switch {
		case slices.Contains(zkrun.Resources(st.exec != nil), r):
			ran = append(ran, r)
		case r == zklock.GuardedResource:
			skipped[r] = r + " is written through the client's own ZooKeeper connection, which the lab makes only for " +
				"a Go lock: a lock run as a process makes its own session"
		default:
			skipped[r] = scenarios.KeptElsewhere(r, kind.Label)
		}
	}
	return ran, skipped
}

func (st zkStore) Open(ctx context.Context, cfg scenarios.EngineConfig) (scenarios.Engine, func() error, error) {
	var (
		ens     *zkd.Ensemble
		err     error
		closeIt = func() error { return ens.Close() }
	)
	if st.shared != nil && !cfg.FaultsMembers {
		ens, err = st.shared.get(ctx)
		cfg.RunID, closeIt = st.shared.runID(cfg.RunID), func() error { return nil }
	} else {
		_, shimErr := clockshim.Build(ctx) // a server fault may move its clock
		ens, err = zkd.Start(ctx, members, zkd.Options{Clocks: shimErr == nil})
	}
	if err != nil {
		return nil, nil, err
	}
	env, err := zkrun.New(zkrun.Config{Ensemble: ens, Factory: st.factory, Exec: st.exec, TTL: cfg.TTL, RunID: cfg.RunID,
		Sinks: cfg.Sinks, Resource: cfg.Resources, Minimum: cfg.Minimum, OpTimeout: cfg.OpTimeout})
	if err != nil {
		closeIt()
		return nil, nil, err
	}
	return env, func() error { return errors.Join(env.Close(), closeIt()) }, nil
}
