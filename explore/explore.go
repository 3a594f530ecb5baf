package explore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/run/etcdrun"
	"github.com/locklab/locklab/script"
)

// Config is one exploration.
type Config struct {
	// Cluster runs every case of Factory's lock, an etcd lock; it must
	// have Walk.Members members. Open, if set, runs them instead, on any
	// store: Cluster and Factory are then not used.
	Cluster *cluster.Cluster
	// Lock names the lock in scripts and messages; Factory makes it.
	Lock    string
	Factory etcdlock.Factory
	// Open starts one case's run, of the lock, with leases of ttl seconds
	// and keys under runID (see Engine): a store's own engine.
	Open func(ctx context.Context, runID string, ttl int) (Engine, error)
	// Property is what every case must satisfy.
	Property Property
	// Walk shapes the drawn scripts (clients, fault kinds).
	Walk script.WalkOptions
	// MaxSteps bounds the actions drawn per case (default 10); the
	// script's closing steps come on top.
	MaxSteps int
	// Cases is how many cases to draw (default 20); Seed fixes them (the
	// same seed draws the same cases; default 1).
	Cases int
	Seed  uint64
	// Shard and Shards, if Shards is above 1, draw only the cases of shard
	// Shard (from 1): case i (from 0) of the Cases belongs to shard
	// i mod Shards + 1, and is drawn exactly as the unsharded exploration
	// of the same Seed draws it (see caseSeed). The shards of an
	// exploration draw its scripts between them, each once.
	Shard, Shards int
	// ShrinkTime bounds the shrinking of a failing case (default 2 min).
	ShrinkTime time.Duration
	// Progress, if set, gets a line per case.
	Progress io.Writer
}

// Engine is one case's run on a store: what its script steps act on,
// then closed, with the run's own error (a fault that failed, a history
// lost), if any.
type Engine interface {
	script.Target
	Err() error
	Close() error
}

// Case is one drawn script and what happened when it ran.
type Case struct {
	// Script is the scenario file of the case, every step's output
	// recorded as it printed (the expected output `locklab run --script`
	// compares against).
	Script string
	// Actions names the drawn actions, in order (closing steps excluded);
	// Faults counts those that were faults.
	Actions []string
	Faults  int
	// Reports are the checks' verdicts per resource.
	Reports map[string]models.Report
	// Progressed says the lock granted again once every fault had healed.
	Progressed bool

	broken error // what the property says is wrong, nil if it held
}

// Steps is how many commands the case's script has.
func (c *Case) Steps() int { return strings.Count(c.Script, "\n----\n") }

// Result is what an exploration found.
type Result struct {
	// Cases is how many cases were drawn before a failure (or in all);
	// Runs counts the scripts that ran on the cluster, shrinking included
	// (a script drawn again is not run again: its outcome is known).
	Cases, Runs int
	// Faulted counts the drawn cases (shrinking aside) with a fault.
	Faulted int
	// Failed is the shrunk failing case, nil if every case held;
	// FailedCase its number among the exploration's cases (from 1).
	Failed     *Case
	FailedCase int
	// Message is the property's complaint about Failed.
	Message string
	// Elapsed is the exploration's wall time.
	Elapsed time.Duration
}

// Run explores until a case breaks the property, then shrinks it; or until
// Cases cases have held. An error is a failure of the lab (a case that
// could not run), never a verdict.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if (cfg.Open == nil && (cfg.Cluster == nil || cfg.Factory == nil)) || cfg.Property.Holds == nil {
		return Result{}, errors.New("explore: Cluster and Factory (or Open), and Property are required")
	}
	cfg.MaxSteps = cmp.Or(cfg.MaxSteps, 10)
	cfg.Cases = cmp.Or(cfg.Cases, 20)
	cfg.Seed = cmp.Or(cfg.Seed, 1)
	cfg.ShrinkTime = cmp.Or(cfg.ShrinkTime, 2*time.Minute)
	if cfg.Walk.Faults == nil {
		cfg.Walk.Faults = script.WalkFaults()
	}
	if cfg.Open == nil && cfg.Cluster.IsExternal() {
		// A user's cluster is not the lab's to partition.
		cfg.Walk.Faults = slices.DeleteFunc(slices.Clone(cfg.Walk.Faults), func(k string) bool { return k == script.WalkIsolate })
		if len(cfg.Walk.Faults) == 0 {
			return Result{}, errors.New("explore: isolate cuts members off from each other, which the lab cannot do to an external cluster")
		}
	}
	began := time.Now()
	x := &exploration{ctx: ctx, cfg: cfg, seen: map[string]*Case{}, firstAt: map[string]int{}, runCase: RunCase}
	tb, err := x.explore()
	if err != nil {
		return Result{}, err
	}
	res := x.res
	res.Elapsed = time.Since(began)
	if x.labErr != nil {
		return res, x.labErr
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if x.failing != nil {
		res.Failed, res.Message, res.FailedCase = x.failing, x.failing.broken.Error(), cmp.Or(x.number, res.Cases)
	} else if tb.failed {
		return res, fmt.Errorf("explore: %s", firstLine(tb.msg))
	}
	return res, nil
}

// explore draws the cases (a shard's, or all) under rapid, shrinking the
// first that fails. What rapid said is in the recorder it returns.
func (x *exploration) explore() (*recorder, error) {
	cfg := x.cfg
	if err := sharedRapid.enter(); err != nil {
		return nil, err
	}
	defer sharedRapid.leave()
	tb := &recorder{}
	if cfg.Shards <= 1 {
		return tb, x.check(tb, cfg.Cases, cfg.Seed)
	}
	if cfg.Shard < 1 || cfg.Shard > cfg.Shards {
		return nil, fmt.Errorf("explore: shard %d of %d does not exist", cfg.Shard, cfg.Shards)
	}
	for i := cfg.Shard - 1; i < cfg.Cases && x.failing == nil && x.labErr == nil && x.ctx.Err() == nil && !tb.failed; i += cfg.Shards {
		x.number = i + 1
		if err := x.check(tb, 1, caseSeed(cfg.Seed, i)); err != nil {
			return nil, err
		}
	}
	return tb, nil
}

// check runs rapid over the property for checks cases drawn from seed,
// as far as a failure's errStop.
func (x *exploration) check(tb *recorder, checks int, seed uint64) error {
	began, err := sharedRapid.beginCheck(checks, seed)
	if err != nil {
		return err
	}
	x.began = began
	defer began()
	if beforeCheck != nil {
		beforeCheck()
	}
	defer func() {
		if r := recover(); r != nil && r != errStop {
			panic(r)
		}
	}()
	rapid.Check(tb, x.prop)
	return nil
}

// beforeCheck, if set (by a test), runs between setting rapid's flags
// for a check and the check.
var beforeCheck func()

// caseSeed is the seed rapid draws case i (from 0) of an exploration from:
// it starts at seed and adds each case's index before drawing it, so case
// i's is seed + 0 + 1 + … + i. A check of one case with this seed draws it
// again. (No case of an exploration is ever rejected as invalid, which
// would shift the ones after it.)
func caseSeed(seed uint64, i int) uint64 { return seed + uint64(i)*uint64(i+1)/2 }

// exploration is one Run's state across the cases rapid draws.
type exploration struct {
	ctx       context.Context // the Run's: rapid's property takes none
	cfg       Config
	res       Result
	labErr    error
	failing   *Case
	shrinking bool
	// runCase runs a drawn case (RunCase; a test's stand-in).
	runCase func(context.Context, Config, []int) (*Case, error)
	// began tells the shared flags that rapid has begun the check (it has
	// read its seed and budget); the property calls it as it runs.
	began func()
	// shrinkEnd is when shrinking stops running new scripts.
	shrinkEnd time.Time
	// number is the case drawn now, counted in the whole exploration, for
	// a shard (zero: count the cases drawn).
	number int
	// seen: a drawn script runs the same way every time, so a script
	// already run need not run again (rapid's shrinking draws many that
	// map to one).
	seen map[string]*Case
	// firstAt is the case that first drew each script seen, by its key.
	firstAt map[string]int
}

// prop is the property rapid checks: a drawn case, run (or seen before),
// holds the configured property.
func (x *exploration) prop(t *rapid.T) {
	ctx, cfg := x.ctx, x.cfg
	x.began()
	if x.labErr != nil || ctx.Err() != nil {
		t.Skip("exploration stopped")
	}
	picks, key := draw(t, cfg)
	if !x.shrinking {
		x.res.Cases++
	}
	c, ok := x.seen[key]
	if !ok && x.shrinking && time.Now().After(x.shrinkEnd) {
		return // shrinking's time is spent: a script not run yet is taken to hold
	}
	if !ok {
		x.res.Runs++
		var err error
		if c, err = x.runCase(ctx, cfg, picks); err != nil {
			if ctx.Err() == nil {
				x.labErr = err
			}
			t.Skip("the case could not run")
		}
		c.broken = cfg.Property.Holds(c)
		x.seen[key] = c
		if !x.shrinking {
			x.firstAt[key] = x.caseNumber()
		}
		x.progress(c, 0)
		if c.broken != nil && (x.failing == nil || c.Steps() <= x.failing.Steps()) {
			x.failing = c
		}
	} else if !x.shrinking {
		x.progress(c, x.firstAt[key])
	}
	if !x.shrinking && c.Faults > 0 {
		x.res.Faulted++
	}
	if c.broken != nil {
		if !x.shrinking {
			x.shrinking, x.shrinkEnd = true, time.Now().Add(cfg.ShrinkTime)
		}
		// One place and the same words for every failing case: rapid
		// keeps a shrunk case only if it fails where and as the first one
		// did (the checks' explanations name revisions, which differ run
		// to run).
		t.Fatalf("property %q does not hold", cfg.Property.Name)
	}
}

// progress prints one line about a case: one that ran, or (again, the
// case that drew its script first) one drawn again, which runs as that
// one did and is not run a second time — every case drawn has its line.
func (x *exploration) progress(c *Case, again int) {
	if x.cfg.Progress == nil {
		return
	}
	verdict := "holds"
	if c.broken != nil {
		verdict = "FAILS: " + firstLine(c.broken.Error())
	}
	what := fmt.Sprintf("case %d", x.caseNumber())
	if x.shrinking {
		what = fmt.Sprintf("shrinking (run %d)", x.res.Runs)
	}
	if again > 0 {
		fmt.Fprintf(x.cfg.Progress, "%s: the script of case %d, drawn again (not run again): %s %s\n", what, again, x.cfg.Property.Name, verdict)
		return
	}
	fmt.Fprintf(x.cfg.Progress, "%s: %d actions, %d steps: %s %s\n", what, len(c.Actions), c.Steps(), x.cfg.Property.Name, verdict)
}

// caseNumber is the case drawn now, counted in the whole exploration.
func (x *exploration) caseNumber() int { return cmp.Or(x.number, x.res.Cases) }

// draw draws a case: how many actions, then each action by its place in
// the walk's list of every action (Names; the walk takes the first it
// allows at or after it). An index names the same action whatever came
// before, so rapid's deleting a step leaves the rest as they were. The walk
// here predicts each step's outcome as a correct lock's (the run itself
// follows what really happens); key names the predicted actions, which fix
// the script.
func draw(t *rapid.T, cfg Config) (picks []int, key string) {
	walk := script.NewWalk(cfg.Walk)
	all := walk.Names()
	n := rapid.IntRange(1, cfg.MaxSteps).Draw(t, "actions")
	var names []string
	for range n {
		u := rapid.IntRange(0, len(all)-1).Draw(t, "action")
		a, ok := walk.Pick(u)
		if !ok {
			break
		}
		walk.Take(a, nil)
		picks, names = append(picks, u), append(names, a.Name)
	}
	return picks, strings.Join(names, "; ")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// errStop ends rapid.Check's run once it has failed (rapid calls FailNow).
var errStop = errors.New("explore: stop")

// recorder is the rapid.TB an exploration runs under: it keeps what rapid
// says instead of failing a test.
type recorder struct {
	mu     sync.Mutex
	failed bool
	msg    string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Name() string              { return "explore" }
func (r *recorder) Logf(string, ...any)       {}
func (r *recorder) Log(...any)                {}
func (r *recorder) Skipf(string, ...any)      { panic(errStop) }
func (r *recorder) Skip(...any)               { panic(errStop) }
func (r *recorder) SkipNow()                  { panic(errStop) }
func (r *recorder) Errorf(f string, a ...any) { r.fail(fmt.Sprintf(f, a...)) }
func (r *recorder) Error(a ...any)            { r.fail(fmt.Sprint(a...)) }
func (r *recorder) Fatalf(f string, a ...any) { r.fail(fmt.Sprintf(f, a...)); panic(errStop) }
func (r *recorder) Fatal(a ...any)            { r.fail(fmt.Sprint(a...)); panic(errStop) }
func (r *recorder) FailNow()                  { r.fail(""); panic(errStop) }
func (r *recorder) Fail()                     { r.fail("") }
func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *recorder) fail(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	if r.msg == "" {
		r.msg = msg
	}
}

// runs numbers the cases' key prefixes within this process.
var (
	runsMu sync.Mutex
	runs   int
)

// open starts a case's run: cfg.Open's, or an etcd run of cfg.Factory on
// cfg.Cluster.
func open(ctx context.Context, cfg Config, runID string, ttl int) (Engine, error) {
	if cfg.Open != nil {
		return cfg.Open(ctx, runID, ttl)
	}
	env, err := etcdrun.New(etcdrun.Config{Cluster: cfg.Cluster, Factory: cfg.Factory, TTL: ttl, OpTimeout: run.OpTimeoutFor(ttl), RunID: runID})
	if err != nil {
		return nil, err
	}
	return env, nil
}

// RunCase runs one case: the walk's preamble, then one action per pick (an
// index into the walk's Names; see Walk.Pick), then
// the walk's closing steps; and checks the histories. Each line's output
// goes into the case's script.
func RunCase(ctx context.Context, cfg Config, picks []int) (*Case, error) {
	walk := script.NewWalk(cfg.Walk)
	runsMu.Lock()
	runs++
	n := runs
	runsMu.Unlock()
	ttl := cmp.Or(cfg.Walk.TTL, 1)
	env, err := open(ctx, cfg, fmt.Sprintf("explore-%s-%d-%d", cfg.Lock, n, time.Now().UnixNano()), ttl)
	if err != nil {
		return nil, err
	}
	env.Bind(ctx)
	c := &Case{Reports: map[string]models.Report{}}
	var lines, outs []string
	do := func(a script.Action) error {
		var got []run.Outcome
		for _, cmd := range a.Cmds {
			if err := ctx.Err(); err != nil {
				return err
			}
			got = append(got, script.Do(ctx, env, cmd))
		}
		lines = append(lines, a.Lines()...)
		for _, o := range got {
			outs = append(outs, o.String())
		}
		walk.Take(a, got)
		return nil
	}
	var runErr error
	if runErr = do(walk.Preamble()); runErr == nil {
		for _, u := range picks {
			a, ok := walk.Pick(u)
			if !ok {
				break
			}
			c.Actions = append(c.Actions, a.Name)
			if a.IsFault() {
				c.Faults++
			}
			if runErr = do(a); runErr != nil {
				break
			}
		}
	}
	for runErr == nil {
		a, ok := walk.Close()
		if !ok {
			break
		}
		if a.Name == "check" {
			break // judged below, once the run is closed
		}
		runErr = do(a)
	}
	runErr = errors.Join(runErr, env.Close(), env.Err())
	if runErr != nil {
		return nil, runErr
	}
	summary, err := env.Check()
	if err != nil {
		return nil, err
	}
	for _, rc := range summary.Checks {
		c.Reports[rc.Resource] = rc.Report
	}
	lines, outs = append(lines, "check"), append(outs, summary.String())
	c.Progressed = walk.Progressed()
	narration := []string{
		fmt.Sprintf("Drawn by locklab explore against the %s lock: %d actions, then the closing steps", cfg.Lock, len(c.Actions)),
		"(wait out cut and paused clients' leases, resume, heal, release, one more grant).",
		"Each step's output is what it printed when it ran.",
	}
	c.Script = script.Render(narration, lines, outs)
	return c, nil
}
