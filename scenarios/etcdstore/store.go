package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/run/etcdrun"
	"github.com/locklab/locklab/scenarios"
)

func init() { scenarios.RegisterDefault(backend{}) }

// Kind is etcd's store kind: what every etcdlock.Factory runs on, what
// its runs can do; its scripts' output is the queue lock's.
var kind = scenarios.StoreKind{Name: etcdrun.Store, Label: etcdrun.Label, Can: etcdrun.Capabilities(), Shows: "the queue lock"}

// Kind is etcd's store kind (see scenarios.StoreKind).
func Kind() scenarios.StoreKind { return kind }

// backend is etcd as a scenarios.Backend.
type backend struct{}

func (backend) Name() string              { return kind.Name }
func (backend) Kind() scenarios.StoreKind { return kind }

// About is "" : etcd's locks are the lab's first, listed on their own.
func (backend) About() (on, needs string) { return "", "" }

func (backend) Names() []string {
	var out []string
	for _, l := range etcdlock.Locks() {
		out = append(out, l.Name)
	}
	for _, r := range etcdlock.Regressions() {
		out = append(out, r.Name)
	}
	return out
}

func (backend) Locks() []lock.Description {
	var out []lock.Description
	for _, l := range etcdlock.Locks() {
		out = append(out, l.Description())
	}
	for _, r := range etcdlock.Regressions() {
		out = append(out, lock.Description{Name: r.Name, About: r.Bug, Bad: &r.Regression})
	}
	return out
}

func (backend) Lock(name string) (scenarios.BackendLock, bool) {
	if l, err := etcdlock.Find(name); err == nil {
		return describe(l.Factory, l.Weak), true
	}
	for _, r := range etcdlock.Regressions() {
		if r.Name == name {
			return describe(r.Factory, nil), true
		}
	}
	return scenarios.BackendLock{}, false
}

func (backend) Regressions() []lock.Regression {
	var out []lock.Regression
	for _, r := range etcdlock.Regressions() {
		out = append(out, r.Regression)
	}
	return out
}

// Exec is a user's etcd lock run as a process (see etcdlock.Exec),
// documented to fail nothing.
func (backend) Exec(command string) (scenarios.BackendLock, error) {
	f, err := etcdlock.Exec(command)
	if err != nil {
		return scenarios.BackendLock{}, err
	}
	l := describe(f, nil)
	l.Preflight = func(ctx context.Context, own scenarios.Servers) (scenarios.GrantShape, error) {
		c, _ := own.(*cluster.Cluster)
		return preflight(ctx, f, c, true)
	}
	return l, nil
}

// Adopt is a user's Go lock on etcd (an etcdlock.Factory), documented to
// fail nothing.
func (backend) Adopt(factory any) (scenarios.BackendLock, error) {
	f, ok := factory.(etcdlock.Factory)
	if !ok || f == nil {
		return scenarios.BackendLock{}, fmt.Errorf("the %s store takes an etcdlock.Factory, not a %T", kind.Name, factory)
	}
	return describe(f, nil), nil
}

// Pool is the run's clusters, one for each of n workers: embedded ones of
// cfg.Members members, started at once (if one fails the others are
// closed), or the user's (cfg.External), connected once and shared.
func (backend) Pool(ctx context.Context, cfg scenarios.Config, n int) ([]scenarios.Servers, error) {
	cs, err := openClusters(ctx, cfg, n)
	if err != nil {
		return nil, err
	}
	out := make([]scenarios.Servers, len(cs))
	for i, c := range cs {
		out[i] = c
	}
	return out, nil
}

// Own is the user's cluster cfg.External names, connected; nil if none.
func (backend) Own(ctx context.Context, cfg scenarios.Config) (scenarios.Servers, error) {
	if cfg.External == nil {
		return nil, nil
	}
	c, err := openCluster(ctx, cfg)
	if err != nil {
		return nil, err // no Servers holding a nil *cluster.Cluster
	}
	return c, nil
}

// describe is the lock f makes as a scenarios.BackendLock, documented to
// fail the lessons weak names; its preflight is one grant on servers of
// its own (or own: a worker's cluster or the user's).
func describe(f etcdlock.Factory, weak map[string]string) scenarios.BackendLock {
	lessons := slices.Sorted(maps.Keys(weak))
	return scenarios.BackendLock{Kind: kind, Weak: lessons,
		Store: func(own scenarios.Servers, shape scenarios.GrantShape) scenarios.Store {
			c, _ := own.(*cluster.Cluster)
			return store{c: c, factory: f, shape: shape}
		},
		Preflight: func(ctx context.Context, own scenarios.Servers) (scenarios.GrantShape, error) {
			c, _ := own.(*cluster.Cluster)
			return preflight(ctx, f, c, false)
		}}
}

// store runs a configuration on an etcd cluster: c, a worker's or the
// user's, or (nil) one started for the configuration alone.
type store struct {
	c       *cluster.Cluster
	factory etcdlock.Factory
	shape   scenarios.GrantShape
}

// members is the size of a cluster started for one configuration alone.
const members = 3

func (st store) Skip(s scenarios.Scenario) string {
	if s.MemberFaults && st.c != nil && st.c.IsExternal() {
		return "needs member faults, not available on an external cluster"
	}
	if !st.shape.Key && s.LosesReleaseAnswer() {
		return "does not apply to this lock: its grants name no key (Grant.Key is empty, as the contract allows), " +
			"so the lab cannot see a release whose answer it cuts take effect on the server, which the lesson is about"
	}
	return ""
}

func (st store) Members() int {
	if st.c == nil {
		return members
	}
	return len(st.c.Members())
}

// Resources are the resources asked for that the lock's grants can write
// to: an etcd-guarded write needs a key besides a token (a tokenless lock
// is refused what needs a token, on any store); the others are skipped,
// saying why.
func (st store) Resources(asked []string) ([]string, map[string]string) {
	why := map[string]string{}
	for _, r := range asked {
		if !slices.Contains(etcdrun.Resources(), r) {
			why[r] = scenarios.KeptElsewhere(r, kind.Label)
			continue
		}
		if !st.shape.Key && st.shape.Token && r == etcdlock.GuardedResource {
			why[r] = "the lock's grants name no key (Grant.Key is empty, as the contract allows for a token of its " +
				"own), so an etcd write cannot be guarded by them: its token fences the fenced resource instead"
		}
	}
	return slices.DeleteFunc(slices.Clone(asked), func(r string) bool { return why[r] != "" }), why
}

func (st store) Open(ctx context.Context, cfg scenarios.EngineConfig) (scenarios.Engine, func() error, error) {
	c, closeCluster := st.c, func() error { return nil }
	if c == nil {
		var err error
		if c, err = cluster.Start(ctx, cluster.Config{Members: members}); err != nil {
			return nil, nil, err
		}
		closeCluster = c.Close
	}
	env, err := etcdrun.New(etcdrun.Config{Cluster: c, Factory: st.factory, TTL: cfg.TTL, Minimum: cfg.Minimum,
		OpTimeout: cfg.OpTimeout, RunID: cfg.RunID, Sinks: cfg.Sinks, Resource: cfg.Resources})
	if err != nil {
		closeCluster()
		return nil, nil, err
	}
	return env, func() error {
		if st.c == nil {
			return errors.Join(env.Close(), closeCluster())
		}
		return errors.Join(env.Close(), restore(context.WithoutCancel(ctx), c))
	}, nil
}
