package redisstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/internal/clockshim"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/redislock"
	"github.com/locklab/locklab/run/redisrun"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/script"
)

// Two stores for locks run as processes: "redis", one primary with
// replicas, and "redlock", Redlock's independent masters. The locks of
// package redislock are the first's.
func init() {
	scenarios.Register(backend{})
	scenarios.Register(backend{masters: redislock.RedlockMasters})
}

// backend is Redis as a scenarios.Backend: the locks of package redislock,
// run on redis-server started for each configuration or on the user's own
// — on one primary with replicas, or (masters above 0) on independent
// masters, the store of a Redlock program.
type backend struct{ masters int }

func (b backend) Name() string { return b.Kind().Name }

// Kind is one primary's, or (masters above 0) Redlock's independent
// masters'.
func (b backend) Kind() scenarios.StoreKind {
	if b.masters > 0 {
		return scenarios.StoreKind{Name: redisrun.MastersStore, Label: redisrun.MastersLabel,
			Can: redisrun.Capabilities(true), Shows: "redlock"}
	}
	return scenarios.StoreKind{Name: redisrun.Store, Label: redisrun.Label, Can: redisrun.Capabilities(false), Shows: "redis-setnx"}
}

func (b backend) Names() []string {
	if b.masters > 0 {
		return nil // the same locks as the other's
	}
	return append(redislock.Names(), redislock.KnownBad()...)
}

func (b backend) About() (on, needs string) {
	if b.masters > 0 {
		return "", ""
	}
	return "real Redis", "redis-server"
}

func (b backend) Locks() []lock.Description {
	if b.masters > 0 {
		return nil // the same locks as the other's
	}
	var out []lock.Description
	for _, l := range redislock.Locks() {
		out = append(out, l.Description())
	}
	return out
}

func (b backend) Lock(name string) (scenarios.BackendLock, bool) {
	l, err := redislock.Find(name)
	if err != nil || b.masters > 0 {
		return scenarios.BackendLock{}, false
	}
	bl := describe(l.Factory, l.Masters, l.Weak)
	if l.Program {
		bl.Preflight = b.user(l.Factory, true).Preflight
	}
	return bl, true
}

// Exec is a user's Redis lock run as a process, on the backend's servers;
// it is documented to fail nothing.
func (b backend) Exec(command string) (scenarios.BackendLock, error) {
	f, err := redislock.Exec(command)
	if err != nil {
		return scenarios.BackendLock{}, err
	}
	return b.user(f, true), nil
}

// Adopt is a user's Go lock on Redis (a redislock.Factory), on the
// backend's servers; it is documented to fail nothing.
func (b backend) Adopt(factory any) (scenarios.BackendLock, error) {
	f, ok := factory.(redislock.Factory)
	if !ok || f == nil {
		return scenarios.BackendLock{}, fmt.Errorf("the %s store takes a lock.Factory[[]*redis.Client], not a %T", b.Name(), factory)
	}
	return b.user(f, false), nil
}

// user is a user's lock made by f, on the backend's servers, with its
// preflight (reask: a lock run as a process, asked again while it holds;
// see scenarios.Reask).
func (b backend) user(f redislock.Factory, reask bool) scenarios.BackendLock {
	l := describe(f, b.masters, nil)
	l.Preflight = func(ctx context.Context, own scenarios.Servers) (scenarios.GrantShape, error) {
		set, _ := own.(*redisd.Set)
		return preflight(ctx, f, b.masters, set, reask)
	}
	return l
}

// preflight has one Locker of f acquire and release once on a Redis
// started for it (a primary, or masters independent ones) — or on own, the
// user's, under a key of its own — with nothing else going on (see
// scenarios.Preflight), and says whether its grant carried a fencing token.
func preflight(ctx context.Context, f redislock.Factory, masters int, own *redisd.Set, reask bool) (_ scenarios.GrantShape, err error) {
	set := own
	if set == nil {
		if masters > 0 {
			set, err = redisd.StartIndependent(ctx, masters, redisd.Options{})
		} else {
			set, err = redisd.StartReplicated(ctx, 0, redisd.Options{})
		}
		if err != nil {
			return scenarios.GrantShape{}, fmt.Errorf("preflight: the scratch Redis: %w", err)
		}
		defer set.Close()
	}
	servers := []int{set.Primary()}
	if masters > 0 {
		servers = make([]int, len(set.Names()))
		for i := range servers {
			servers[i] = i
		}
	}
	var rcs []*redis.Client
	for _, i := range servers {
		rc := redis.NewClient(set.ClientOptions(i, set.Admin(i).Options().Addr))
		defer rc.Close()
		rcs = append(rcs, rc)
	}
	l, err := f(rcs, "preflight", lock.Options{Prefix: fmt.Sprintf("locklab/preflight-%d/", time.Now().UnixNano())})
	if err != nil {
		return scenarios.GrantShape{}, fmt.Errorf("preflight: %w", err)
	}
	defer l.Close()
	actx, cancel := process.WithStartup(ctx, scenarios.PreflightTimeout-process.StartupAllowance)
	g, err := l.Acquire(actx)
	cancel()
	if err != nil {
		return scenarios.GrantShape{}, fmt.Errorf("preflight: acquire, alone on a Redis of its own: %w", err)
	}
	rctx, cancel := context.WithTimeout(ctx, scenarios.PreflightTimeout)
	defer cancel()
	if err := l.Release(rctx, g); rctx.Err() != nil {
		return scenarios.GrantShape{}, fmt.Errorf("preflight: release, alone on a Redis of its own, did not return: %w", err)
	}
	if reask {
		if err := scenarios.Reask(ctx, l, ender(rcs)); err != nil {
			return scenarios.GrantShape{}, err
		}
	}
	shape := scenarios.ShapeOf(l, g)
	shape.Key = true // a Redis grant is followed by its key and value
	return shape, nil
}

// ender ends a grant on Redis as a lesson's expiry does (its key deleted
// on every server it was written to) and reads whether a grant is held:
// its key holding its value on a majority of the servers.
type ender []*redis.Client

func (e ender) End(ctx context.Context, g lock.Grant) error {
	var errs []error
	for _, c := range e {
		if err := c.Del(ctx, g.Key).Err(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (e ender) Holds(ctx context.Context, g lock.Grant) (bool, error) {
	held := 0
	for _, c := range e {
		v, err := c.Get(ctx, g.Key).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return false, err
		}
		if err == nil && (g.Value == "" || v == g.Value) {
			held++
		}
	}
	return held > len(e)/2, nil
}

// describe is the lock f makes as a scenarios.BackendLock: on masters
// independent masters (0: one primary with replicas), documented to fail
// the lessons weak names.
func describe(f redislock.Factory, masters int, weaknesses map[string]string) scenarios.BackendLock {
	kind := backend{masters: masters}.Kind()
	weak := slices.Sorted(maps.Keys(weaknesses))
	return scenarios.BackendLock{Kind: kind, Weak: weak, Store: func(own scenarios.Servers, _ scenarios.GrantShape) scenarios.Store {
		st := redisStore{factory: f, masters: masters}
		st.own, _ = own.(*redisd.Set)
		st.shared, _ = own.(*shared)
		return st
	}}
}

func (b backend) Regressions() []lock.Regression {
	if b.masters > 0 {
		return nil // the same locks as the other's
	}
	return redislock.Regressions()
}

// Own is the user's Redis, cfg.Redis (one primary, or Redlock's masters),
// connected; nil if cfg names none.
func (backend) Own(ctx context.Context, cfg scenarios.Config) (scenarios.Servers, error) {
	if len(cfg.Redis) == 0 {
		return nil, nil
	}
	set, err := redisd.Connect(ctx, cfg.Redis)
	if err != nil {
		return nil, err // no Servers holding a nil *redisd.Set
	}
	return set, nil
}

// redisStore runs a configuration on Redis started for it: a primary and
// two replicas, or five independent masters for a lock that takes them.
type redisStore struct {
	factory redislock.Factory
	masters int
	// own, if set, is the user's Redis, shared by every run.
	own *redisd.Set
	// shared, if set, is the run's Redis, for a configuration that faults
	// no server (see Share).
	shared *shared
}

// redisMembers is the size of the Redis a run starts: a primary and two
// replicas, as the etcd scenarios' three members.
const redisMembers = 3

func (st redisStore) Skip(s scenarios.Scenario) string {
	if st.own != nil {
		switch n := len(st.own.Names()); {
		case s.MemberFaults:
			return "needs faults of the Redis servers, not available on a Redis of your own"
		case st.masters > 0 && n < 3:
			return fmt.Sprintf("Redlock needs independent masters: --redis gave %d address(es)", n)
		case st.masters == 0 && n != 1:
			return fmt.Sprintf("a lock on one primary needs one address: --redis gave %d", n)
		}
		return ""
	}
	if _, err := redisd.Find(); err != nil {
		return fmt.Sprintf("%v: the Redis locks were not run", err)
	}
	if slices.Contains(s.Needs(), script.JumpClock) {
		if _, err := clockshim.Build(context.Background()); err != nil {
			return fmt.Sprintf("%v: the lab cannot move Redis's clock", err)
		}
	}
	return ""
}

func (st redisStore) Members() int {
	if st.own != nil {
		return max(len(st.own.Names()), redisMembers) // a script's member names where clients say they are
	}
	return max(st.masters, redisMembers)
}

func (st redisStore) Resources(asked []string) ([]string, map[string]string) {
	var ran []string
	skipped := map[string]string{}
	for _, r := range asked {
		switch {
		case r == redislock.GuardedResource && st.masters > 0:
			skipped[r] = r + " guards a write with the lock's key on one Redis: Redlock's keys live on independent " +
				"masters, none of which alone can guard a write"
		case !slices.Contains(redisrun.Resources(st.masters > 0), r):
			skipped[r] = scenarios.KeptElsewhere(r, backend{masters: st.masters}.Kind().Label)
		case r == "fenced" && st.masters > 0:
			skipped[r] = "Redlock gives no fencing token, so a fenced store refuses every write of its holders: " +
				"the store cannot fence what it is not given"
		default:
			ran = append(ran, r)
		}
	}
	return ran, skipped
}

func (st redisStore) Open(ctx context.Context, cfg scenarios.EngineConfig) (scenarios.Engine, func() error, error) {
	var (
		set *redisd.Set
		err error
	)
	keep := func() error { return nil } // the user's or the run's: closed once, by Run
	closeSet := keep
	switch {
	case st.own != nil:
		set = st.own
	case st.shared != nil && !cfg.FaultsMembers:
		set, err = st.shared.get(ctx)
		cfg.RunID = st.shared.runID(cfg.RunID)
	default:
		set, err = start(ctx, st.masters, true)
		if err == nil {
			closeSet = set.Close
		}
	}
	if err != nil {
		return nil, nil, err
	}
	env, err := redisrun.New(redisrun.Config{Set: set, Masters: st.masters > 0, Factory: st.factory, TTL: cfg.TTL,
		RunID: cfg.RunID, Sinks: cfg.Sinks, Resource: cfg.Resources, Minimum: cfg.Minimum, OpTimeout: cfg.OpTimeout})
	if err != nil {
		closeSet()
		return nil, nil, err
	}
	return env, func() error { return errors.Join(env.Close(), closeSet()) }, nil
}
