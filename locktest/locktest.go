package locktest

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/scenarios/etcdstore"
)

// Name is the name the lock under test goes by in results and reports.
const Name = "lock-under-test"

// config is what Run runs; Options change it.
type config struct {
	scenarios  []string
	resources  []string
	seed       uint64
	seeds      int
	external   *cluster.External
	compare    []string
	extra      []scenarios.Scenario
	parallel   int
	cases      int
	leaseScale int
	store      string
}

// target is the lock a gate runs, on its store.
type target struct {
	// store is the registered store the lock is adopted by.
	store string
	// factory is the lock's factory as given.
	factory any
	// l is the lock as its store runs it.
	l scenarios.BackendLock
	// tokenless: the preflight's grant carried no fencing token.
	tokenless bool
}

// kind is what lessons are for the lock (see scenarios.Scenario.NotFor).
func (tg target) kind() scenarios.StoreKind { return tg.l.Kind }

// An Option changes what Run runs.
type Option func(*config)

// Seeds runs every scenario with n seeds, from first: first, first+1, …
// (default 1 seed, seed 1).
func Seeds(first uint64, n int) Option {
	return func(c *config) { c.seed, c.seeds = first, n }
}

// LeaseScale makes every lease k times as long as its scenario writes it
// (1 s for most, so k seconds; see scenarios.Scenario.Scaled): a shared,
// busy CI runner may not renew a 1 s lease in time, and a lapse the
// machine caused judges nothing (the run is ERROR, and run again; see
// scenarios.Attempts). Jepsen's lock tests use 2 s. The exploration's
// drawn scripts (Cases), written for 1 s leases, take k-second leases.
func LeaseScale(k int) Option {
	return func(c *config) { c.leaseScale = k }
}

// TTL is LeaseScale's older name.
//
// Deprecated: use LeaseScale (a factor; a TTL is in seconds).
func TTL(seconds int) Option { return LeaseScale(seconds) }

// Scenarios runs only the named scenarios (default: the whole catalog).
func Scenarios(names ...string) Option {
	return func(c *config) { c.scenarios = names }
}

// Script adds a scenario of your own, in the format of the catalog's
// scripts (scenarios.FromScript makes one).
func Script(s scenarios.Scenario) Option {
	return func(c *config) { c.extra = append(c.extra, s) }
}

// Resource is a resource the lock protects in the scenarios.
type Resource string

// The resources (see the lock package): a store that accepts every write;
// one that rejects a write whose fencing token is older than one it has
// seen; an etcd key written only while the lock's key is still the
// holder's; a Redis key written only while the lock's key holds the
// grant's value; a ZooKeeper node written only while the grant's lock
// node stands.
const (
	Unfenced     Resource = "unfenced"
	Fenced       Resource = "fenced"
	EtcdGuarded  Resource = "etcd-guarded"
	RedisGuarded Resource = "redis-guarded"
	ZKGuarded    Resource = "zk-guarded"
)

// Resources protects these resources with the lock (default Fenced and
// the store's guarded resource: EtcdGuarded on etcd, RedisGuarded on one
// Redis primary, ZKGuarded on ZooKeeper; Fenced and Unfenced where the
// store keeps none, as Redlock's masters. Unfenced adds the lessons whose
// documented outcome is FAIL, as findings. A lock that gives no token has
// Fenced skipped, and is judged on the store's guarded resource — on
// Redis, guarded by the grant's value — or on Unfenced alone).
func Resources(rs ...Resource) Option {
	return func(c *config) {
		c.resources = []string{}
		for _, r := range rs {
			c.resources = append(c.resources, string(r))
		}
	}
}

// Endpoints runs on your own cluster instead of an embedded one; the
// scenarios that kill or partition members are skipped there, and say so.
func Endpoints(x cluster.External) Option {
	return func(c *config) { c.external = &x }
}

// CompareWith runs the named built-in locks through the same schedules
// beside yours, each as its own subtest, so that a failure of yours can be
// told from a schedule every lock fails: etcdlock.Names (etcd's Mutex and
// Election as they ship among them) or etcdlock.Adapters beside a lock on
// etcd, redislock.Names beside one on Redis.
func CompareWith(builtins ...string) Option {
	return func(c *config) { c.compare = builtins }
}

// Store runs the lock on the store of that name: etcd (the default for an
// etcdlock.Factory), or a store linked into the test by importing its
// package under scenarios/ (the default for a lock.Factory of that store's
// client; locklab list names the stores and their locks):
//
//	import _ "github.com/locklab/locklab/scenarios/redisstore" // redis, redlock
//	import _ "github.com/locklab/locklab/scenarios/zkstore"
//	import _ "github.com/locklab/locklab/scenarios/pgstore"
//
// On a store other than etcd the catalog's lessons for that store run, on
// the fenced resource and the store's own guarded one (etcd-guarded is
// etcd's); the exploration (Cases) draws the faults the store can make,
// each case on servers started for it (for a lock that gives no token it
// is left out, saying why); Endpoints is etcd's, and refused.
func Store(name string) Option {
	return func(c *config) { c.store = name }
}

// Parallel sets how many configurations of a scenario run at once, each on
// its own embedded cluster (default scenarios.DefaultParallel).
func Parallel(n int) Option {
	return func(c *config) { c.parallel = n }
}

// Cases sets how many drawn scripts the exploration subtest runs against
// the lock (default 10; 0 leaves it out). The exploration draws scenario
// scripts from the first seed — pauses, cut links and blips, revoked
// leases of holders and waiters, crashes, lost acquire answers; isolated
// members and slow links are the catalog's part — and each must keep every check on the chosen
// resources (unfenced left out: it is the lesson, not the lock) and see
// the lock grant again once faults heal; a failing script is shrunk and
// written under the subtest's artifact directory.
func Cases(n int) Option {
	return func(c *config) { c.cases = n }
}

// Run runs the scenarios against the lock factory makes. First, one of its
// Lockers must acquire and release once alone on a scratch cluster
// (scenarios.Preflight); a lock that cannot fails the test there, in one
// line. Each scenario is
// a subtest (so -run selects them) and each result under it a subtest
// named lock/resource/seed. The selected scenarios run together, their
// configurations side by side (Parallel), before their subtests report. A
// result that is not its documented verdict fails its subtest with the
// explanation and what to change, once per finding (the same finding on
// another seed or resource is one line), the seed and the command that runs
// the same schedule again; a failed gate ends with one summary table. The
// report is written under the test's ArtifactDir: go test -artifacts keeps
// it. Lessons of another store are left out, in one logged line; a gate in
// which nothing ran fails. The scenario subtests are parallel subtests, so
// the test that calls Run must not call t.Setenv (set the environment in
// TestMain instead).
//
// factory is a lock.Factory of the store's client: an etcdlock.Factory
// for etcd, a lock.Factory[[]*redis.Client] for Redis, a
// lock.Factory[*zk.Conn] for ZooKeeper (see Store).
func Run[C any](t *testing.T, factory lock.Factory[C], opts ...Option) {
	t.Helper()
	cfg := configOf(opts)
	if factory == nil {
		t.Fatal("locktest: no lock factory")
	}
	tg, err := targetOf(cfg, factory)
	if err != nil {
		t.Fatalf("locktest: %v", err)
	}
	if cfg.resources == nil {
		cfg.resources = defaultResources(tg)
	}
	// A lock that cannot take and give back the lock alone on a healthy
	// store would fail every lesson the same way: say so once.
	if tg.tokenless, err = preflight(t, cfg, tg); err != nil {
		t.Fatalf("locktest: %v", err)
	}
	var leftOut []string
	cfg.scenarios, leftOut = lessonsFor(cfg, tg.kind())
	if len(leftOut) > 0 {
		t.Logf("locktest: left out, not lessons for a lock on %s: %s", tg.store, strings.Join(leftOut, "; "))
	}
	g := newGate()
	ran := 0
	t.Cleanup(func() {
		if s := g.summary(); s != "" {
			t.Log(s)
		} else if g.judged > 0 {
			t.Logf("locktest: %d results as documented", g.judged)
		}
		switch {
		case ran > 0 || t.Failed():
		case len(cfg.scenarios) == 0:
			// Every lesson asked for is another store's.
			t.Errorf("locktest: nothing tested: no lesson asked for is one for a lock on %s (%s)", tg.store, strings.Join(leftOut, "; "))
		default:
			// Every configuration skipped (or none selected): nothing
			// was tested, and that is never a pass.
			t.Errorf("locktest: nothing tested: every configuration of %s was skipped or not selected",
				strings.Join(cfg.scenarios, ", "))
		}
	})
	// Each selected scenario's subtest says so, then waits (Parallel) until
	// this function has run them all at once and judged every result.
	var (
		selected []string
		judged   = map[string][]judgement{}
		runErr   error
	)
	for _, name := range cfg.scenarios {
		t.Run(name, func(t *testing.T) {
			selected = append(selected, name)
			t.Parallel()
			if runErr != nil {
				t.Skip("locktest: the scenarios did not run (the error is above)")
			}
			for _, j := range judged[name] {
				t.Run(j.name, j.report)
			}
		})
	}
	if why := exploreLeftOut(cfg, tg); why != "" {
		t.Logf("locktest: the exploration (Cases) is left out: %s", why)
	} else if cfg.cases > 0 {
		t.Run("explore", func(t *testing.T) {
			t.Parallel()
			ran += runExplore(t, g, cfg, tg)
		})
	}
	if len(selected) > 0 {
		ran, runErr = runCatalog(t, g, cfg, selected, tg, judged)
		if runErr != nil {
			t.Errorf("locktest: %v", runErr)
		}
	}
}

// configOf is what opts ask to run: every scenario (the catalog's and
// the extra ones) unless they name some, on seed 1, with 10 cases.
func configOf(opts []Option) config {
	cfg := config{seed: 1, seeds: 1, cases: 10}
	for _, o := range opts {
		o(&cfg)
	}
	if len(cfg.scenarios) == 0 {
		cfg.scenarios = scenarios.Names()
		for _, s := range cfg.extra {
			cfg.scenarios = append(cfg.scenarios, s.Name)
		}
	}
	return cfg
}

// runCatalog runs the selected scenarios against the lock and the locks it
// is compared with, writes the report and judges every result into judged,
// by scenario; it returns how many configurations of the lock under test
// ran.
func runCatalog(t *testing.T, g *gate, cfg config, selected []string, tg target,
	judged map[string][]judgement) (ran int, err error) {
	dir := t.ArtifactDir()
	sc := scenarios.Config{
		Scenarios: selected, Locks: append([]string{Name}, cfg.compare...), Resources: cfg.resources,
		Seed: cfg.seed, Runs: cfg.seeds, External: cfg.external, Out: dir,
		Extra: cfg.extra, Parallel: cfg.parallel, LeaseScale: cfg.leaseScale,
	}
	sc.Store, sc.StoreFactories = tg.store, map[string]any{Name: tg.factory}
	sum, err := scenarios.Run(t.Context(), sc)
	if err != nil {
		return 0, err
	}
	report := filepath.Join(dir, reports.IndexFile)
	rerun := []string{"go", "test", "-run", fmt.Sprintf("'^%s$'", regexpQuote(t.Name()))}
	rep, err := scenarios.Report(dir, "locktest "+t.Name(), rerun, sum.Results, cfg.extra)
	if err == nil {
		rep.Complete, rep.Seconds = sum.Complete, sum.Seconds
		err = reports.Write(dir, rep)
	}
	if err != nil {
		t.Errorf("locktest: report: %v", err)
	}
	for _, r := range sum.Results {
		if r.Lock == Name && r.Skipped == "" {
			ran++
		}
		again := fmt.Sprintf("go test -run '^%s$'", regexpQuote(t.Name()+"/"+r.Scenario))
		judged[r.Scenario] = append(judged[r.Scenario], g.judge(r, again, report))
	}
	return ran, nil
}

// lessonsFor splits the scenarios cfg names into those that are lessons
// for the lock under test, a lock of kind k, and why each other one is not
// (another store's lesson). A name the catalog does not know is kept: its
// subtest says so.
func lessonsFor(cfg config, k scenarios.StoreKind) (kept, leftOut []string) {
	for _, name := range cfg.scenarios {
		s, err := scenarios.Lookup(name)
		if i := slices.IndexFunc(cfg.extra, func(s scenarios.Scenario) bool { return s.Name == name }); i >= 0 {
			s, err = cfg.extra[i], nil
		}
		if why := s.NotFor(k); err == nil && why != "" {
			leftOut = append(leftOut, why)
			continue
		}
		kept = append(kept, name)
	}
	return kept, leftOut
}

// targetOf is the lock factory makes, on the store cfg names or, if none,
// the store whose client factory takes.
func targetOf[C any](cfg config, factory lock.Factory[C]) (target, error) {
	name, l, err := scenarios.Adopt(cfg.store, factory)
	if err != nil {
		return target{}, err
	}
	if cfg.external != nil && name != etcdstore.Kind().Name {
		return target{}, fmt.Errorf("Endpoints: an etcd cluster of your own is for a lock on etcd, not on %s", l.Kind.Label)
	}
	return target{store: name, factory: factory, l: l}, nil
}

// defaultResources are the resources a gate protects with tg's lock when
// none are asked for (see Resources): the fenced one, and the one its
// store guards itself — or, where it guards none, the unfenced one.
func defaultResources(tg target) []string {
	ran, _ := tg.l.Store(nil, scenarios.GrantShape{Token: true, Key: true}).Resources(resource.Names())
	for _, r := range ran {
		if _, kept := resource.KeptBy(r); kept {
			return []string{string(Fenced), r}
		}
	}
	return []string{string(Fenced), string(Unfenced)}
}

// preflight has one Locker of the lock acquire and release once alone on
// a store of its own, or on the user's cluster (see
// scenarios.BackendLock.Preflight), and says whether its grant carried no
// fencing token.
func preflight(t *testing.T, cfg config, tg target) (tokenless bool, err error) {
	shape, err := scenarios.PreflightLock(t.Context(), scenarios.Config{External: cfg.external}, tg.l)
	return !shape.Token, err
}

// guardedOf are the resources a correct lock must keep safe.
func guardedOf(resources []string) []string {
	var out []string
	for _, r := range resources {
		if r != string(Unfenced) {
			out = append(out, r)
		}
	}
	return out
}

// regexpQuote quotes a test name for -run, level by level (subtests are
// split on "/").
func regexpQuote(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(parts, "$/^")
}
