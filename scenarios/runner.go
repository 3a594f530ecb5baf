package scenarios

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/semaphore"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/models"
)

// Version is written into every history header and results file.
const Version = "0.1.0"

// Config is what to run.
type Config struct {
	Scenarios []string // scenario names; the runner checks them
	Locks     []string
	Resources []string
	Seed      uint64
	Runs      int // runs per scenario × lock, with seeds Seed, Seed+1, …
	// Members is the size of each embedded etcd cluster (scenarios/etcdstore).
	Members int
	// External, if set, runs etcd's locks on that cluster instead of
	// embedded ones (scenarios/etcdstore); scenarios that need member
	// faults are skipped.
	External *cluster.External
	// Redis, if set, runs the Redis locks on that Redis of the user's own
	// (addresses or redis:// URLs: one primary, or Redlock's independent
	// masters) instead of one started for each run; scenarios that need
	// faults of its servers are skipped.
	Redis []string
	// Store is the store the locks run as processes (process.ExecPrefix) and
	// the locks of StoreFactories are on: a registered store's name, ""
	// for the default store (etcd's, see RegisterDefault); "" for
	// StoreFactories is the first registered store that takes each (see
	// Adopt).
	Store string
	// ExpectPass treats every configuration as expected to pass (CI gate).
	ExpectPass bool
	// Out is the directory for results; empty writes nothing.
	Out string
	// Replay, if set, is run instead of the plan derived from the seed.
	Replay *Plan
	// Factories adds etcd locks, by name, to the registered stores' ones,
	// or replaces one of the same name (the caller's lock, whatever its
	// name: never a known-bad one).
	Factories map[string]etcdlock.Factory
	// StoreFactories adds Go locks of any store, by name: each a
	// lock.Factory of that store's client ([]*redis.Client for Redis; see
	// Adopt).
	StoreFactories map[string]any
	// Extra are scenarios beside the catalog's (FromScript makes them);
	// Scenarios names them like the catalog's.
	Extra  []Scenario
	Logger *zap.Logger
	// Progress, if set, gets a line per configuration as it finishes, in
	// the jobs' order, with notes under it (skips, errors, attempts made
	// again).
	Progress io.Writer
	// Finished, if set, is called as each configuration finishes, in the
	// order they finish, one call at a time: its results and how many of
	// the run's total configurations have finished so far.
	Finished func(rs []Result, done, total int)
	// Parallel is how many configurations run at once (zero:
	// DefaultParallel); of a lock run as programs, at most one per CPU
	// (see slotsOf). On an embedded cluster each runs on its own
	// cluster, started for it — member faults stay within their run; on an
	// external cluster they share it, each under its own key prefix.
	Parallel int
	// LeaseScale, if above 1, makes every lease that many times as long as
	// its scenario writes it (1 s for most; see Scenario.Scaled): room for
	// a slow or busy machine to renew in time, at the price of a longer
	// run. (A TTL is always in seconds; this is a factor.)
	LeaseScale int
	// Shard, if set, runs only that part of the jobs (see Shard); the
	// results file records it, for Merge.
	Shard Shard

	// wrapSink, if set, wraps every history file's sink (tests use it to
	// make recording fail part-way through a run).
	wrapSink func(history.Sink) history.Sink
	// regressions are the known-bad locks among the locks.
	regressions map[string]lock.Regression
	// servers are what the run's configurations are on, by store: each
	// worker's, the run's shared, the user's (see openServers).
	servers runServers
	// shapes are what each lock's grants carry, learnt from one grant
	// before the runs (shapesOf).
	shapes map[string]GrantShape
	// lessonsLeftOut are the lessons jobs left out for some of the locks,
	// their store unable to run them.
	lessonsLeftOut []LessonLeftOut
}

// Result is one scenario × lock × resource × run.
type Result struct {
	Scenario string `json:"scenario"`
	Lock     string `json:"lock"`
	Resource string `json:"resource"`
	Seed     uint64 `json:"seed"`
	Expected Expect `json:"expected"`
	// Verdict is PASS, FAIL, UNKNOWN (a checker ran out of time) or ERROR
	// (the run itself went wrong: Error says how).
	Verdict models.Result `json:"verdict"`
	// Belief: did two clients believe they held the lock at once (FAIL)?
	Belief models.Result `json:"belief"`
	// Progress: did the run do enough to judge the lock (FAIL: too little,
	// and the result matches no expectation)?
	Progress models.Result    `json:"progress"`
	Matches  bool             `json:"matches_expectation"`
	Checks   []models.Verdict `json:"checks,omitempty"`
	// Effects: did what the scenario claims happen in this run? One that
	// did not makes the run vacuous: ERROR unless a check FAILed.
	Effects []EffectResult `json:"effects,omitempty"`
	// LostFraction is the share of acknowledged increments the counter lost
	// (random scenario, unfenced resource).
	LostFraction *float64 `json:"lost_fraction,omitempty"`
	// Error says why the verdict is ERROR.
	Skipped string  `json:"skipped,omitempty"`
	Error   string  `json:"error,omitempty"`
	Seconds float64 `json:"seconds"`
	History string  `json:"history,omitempty"`
	// Retried lists the earlier attempts of this configuration, run again
	// because their environment took a holder's lease away (see Attempts).
	Retried []string `json:"retried,omitempty"`
	// LeaseScale, when set, is how many times as long as its scenario
	// writes them the leases of this, the last attempt, were: the earlier
	// ones lapsed by the environment, and the last gives a busy machine
	// room (see Attempts). Its schedule.json says so, and replay runs it
	// alike.
	LeaseScale int `json:"lease_scale,omitempty"`
	// Interrupted says the run was stopped (Ctrl-C) while this
	// configuration ran: it has no verdict (Skipped says "interrupted"),
	// and is counted as interrupted, not as skipped.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Errors about what to run.
var (
	// ErrNothingToRun: no scenario, no lock or no resource was given — a run
	// of nothing would pass vacuously.
	ErrNothingToRun = errors.New("nothing to run")
	// ErrInterrupted: ctx ended before every configuration ran; the summary
	// is incomplete and proves nothing about what did not run.
	ErrInterrupted = errors.New("interrupted: results are incomplete")
)

// Run runs every configuration and returns the results. An empty list of
// scenarios, locks or resources is ErrNothingToRun. ctx ending stops it
// between steps: the cluster is closed, the summary says incomplete and the
// error is ErrInterrupted.
func Run(ctx context.Context, config Config) (Summary, error) {
	cfg := &config
	began := time.Now()
	sum := Summary{Version: Version}
	jobs, leftOut, err := cfg.jobs()
	if err != nil {
		return sum, err
	}
	sum.Campaign = &Campaign{Scenarios: cfg.Scenarios, Locks: cfg.Locks, Resources: cfg.Resources, Seed: cfg.Seed,
		Runs: cfg.Runs, Members: cfg.Members, LeaseScale: max(cfg.LeaseScale, 1), ExpectPass: cfg.ExpectPass,
		External: cfg.External != nil, Jobs: len(jobs), Shard: cfg.Shard, LeftOut: leftOut,
		LessonsLeftOut: cfg.lessonsLeftOut}
	if cfg.Shard.Count > 1 {
		var kept []job
		for i, j := range jobs {
			if cfg.Shard.keeps(i) {
				kept = append(kept, j)
			}
		}
		if jobs = kept; len(jobs) == 0 {
			return sum, fmt.Errorf("%w: shard %s of a campaign of %d jobs", ErrNothingToRun, cfg.Shard, sum.Campaign.Jobs)
		}
	}
	parallel := cfg.Parallel
	if parallel <= 0 {
		parallel = DefaultParallel()
	}
	workers := min(parallel, len(jobs))
	servers, err := openServers(ctx, *cfg, jobs, workers)
	if err != nil {
		if ctx.Err() != nil { // interrupted while starting: incomplete, not broken
			return sum, errors.Join(ErrInterrupted, writeSummary(cfg.Out, sum))
		}
		return sum, err
	}
	defer servers.close()
	cfg.servers = servers
	cfg.shapes = shapesOf(ctx, jobs, servers.preflightOn)
	sum.Results = runJobs(ctx, *cfg, workers, jobs)
	sum.Complete = ctx.Err() == nil
	sum.Seconds = time.Since(began).Seconds()
	err = writeSummary(cfg.Out, sum)
	if !sum.Complete {
		err = errors.Join(ErrInterrupted, err)
	}
	return sum, err
}

// DefaultParallel is how many configurations run at once unless told: a
// run mostly waits — for leases to lapse, faults to hold, elections — so
// twice the CPUs, at most 8.
func DefaultParallel() int { return min(2*runtime.NumCPU(), 8) }

// job is one scenario × lock × seed: the lock by name and as its store
// runs it.
type job struct {
	s    Scenario
	lock string
	l    BackendLock
	seed uint64
	// resources are those of the run's a lock of its store can protect:
	// none another store keeps.
	resources []string
}

// runJobs runs jobs on workers workers, one job per worker at a time, each
// on the servers its store keeps for the worker (see runServers), and
// returns their results
// in the jobs' order. Progress is printed in that order too, as soon as a
// job and every one before it have finished. Once ctx ends no job starts;
// the ones that did not run have no results.
func runJobs(ctx context.Context, cfg Config, workers int, jobs []job) []Result {
	results := make([][]Result, len(jobs))
	finished := make([]bool, len(jobs))
	cols := columnsOf(jobs)
	said := map[string]bool{} // the skip reasons printed so far
	var (
		mu      sync.Mutex
		printed int
		done    int
		next    atomic.Int64
		wg      sync.WaitGroup
	)
	order := longestFirst(jobs)
	slots := semaphore.NewWeighted(int64(workers))
	for w := range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				k := int(next.Add(1)) - 1
				if k >= len(jobs) {
					return
				}
				i := order[k]
				j := jobs[i]
				weight := cfg.slotsOf(j, workers, runtime.NumCPU())
				if slots.Acquire(ctx, weight) != nil {
					return
				}
				rs := attempts(ctx, max(cfg.LeaseScale, 1), func(scale int) []Result {
					at := cfg
					at.LeaseScale = scale
					return runOne(ctx, at, w, j)
				})
				slots.Release(weight)
				mu.Lock()
				results[i], finished[i] = rs, true
				if done++; cfg.Finished != nil {
					cfg.Finished(rs, done, len(jobs))
				}
				for printed < len(jobs) && finished[printed] {
					progress(cfg.Progress, cols, results[printed], said)
					printed++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	out := []Result{} // none finished: an empty list, not none at all
	for i, rs := range results {
		if finished[i] {
			out = append(out, rs...)
		}
	}
	return out
}

// slotsOf is how many of a run's workers slots job j takes while it runs:
// one, or — for a lock run as programs (its preflight said so) — as many
// as leave room for one such configuration per CPU (cpus). Each of its
// clients is a process of its own the machine schedules beside the lab's,
// five of them in contention: eight configurations of etcdctl at once on
// 2 cores starved them (no program answered within its step's time), and
// hand-off, which excuses the lab's own stalls but not oversubscribed
// CPUs, blamed the lock on 2 seeds of 5; one per CPU, none of 20.
func (cfg Config) slotsOf(j job, workers, cpus int) int64 {
	if !cfg.shape(j.lock).Program {
		return 1
	}
	return int64(min(workers, max(1, (workers+cpus-1)/max(cpus, 1))))
}

// longestFirst is the order a run starts its jobs in: the longest
// scenarios first (Scenario.seconds), the rest in their order, so that the
// last to finish are short. Results and progress keep the jobs' order, and
// each job's schedule is its seed's: only when a job starts depends on it.
func longestFirst(jobs []job) []int {
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return jobs[b].s.seconds - jobs[a].s.seconds })
	return order
}

// runOne runs one scenario × lock with one seed on every resource, as
// worker w: on the servers its store keeps for w, or on servers started
// for it (see runServers).
func runOne(ctx context.Context, cfg Config, w int, j job) []Result {
	began := time.Now()
	s := j.s.Scaled(cfg.LeaseScale)
	resources := j.resources
	base := Result{Scenario: s.Name, Lock: j.lock, Seed: j.seed}
	each := func(fill func(x *Result)) []Result {
		out := make([]Result, len(resources))
		for i, r := range resources {
			out[i] = base
			out[i].Resource = r
			fill(&out[i])
		}
		return out
	}
	fail := func(msg string) []Result {
		return each(func(x *Result) {
			x.Error, x.Verdict, x.Expected = msg, models.Error, expectation(cfg, s, j, x.Resource)
		})
	}
	st := j.l.Store(cfg.servers.of(j.l.Kind.Name, w), cfg.shape(j.lock))
	shim, why := skipOf(ctx, st, s, cfg.shape(j.lock))
	if why != "" {
		return each(func(x *Result) { x.Skipped = why })
	}
	if s.Members > st.Members() {
		return fail(fmt.Sprintf("needs %d members, the cluster has %d", s.Members, st.Members()))
	}
	plan, err := planOf(cfg, s, j)
	if err != nil {
		return fail(err.Error())
	}
	// The resources the store can give: the others are skipped, saying why.
	ran, skipped := st.Resources(resources)
	ran, skipped = tokenless(s, cfg.shape(j.lock), ran, skipped)
	if len(ran) == 0 { // none the lock's grants can write to
		return each(func(x *Result) { x.Skipped = skipped[x.Resource] })
	}
	rec, err := record(cfg, ran, st.Members(), s, j, plan)
	if err != nil {
		return fail(err.Error())
	}
	minimum := s.minimum()
	interrupted := func() []Result { // a cut-short history proves nothing either way
		rec.abort() // and none is left that looks complete
		return each(func(x *Result) {
			x.Skipped, x.Interrupted, x.Expected = "interrupted", true, expectation(cfg, s, j, x.Resource)
		})
	}
	env, closeEnv, opened, err := open(ctx, st, EngineConfig{TTL: s.TTL, Minimum: &minimum, OpTimeout: s.opTimeout,
		Sinks: rec.sinks, Resources: ran, RunID: fmt.Sprintf("%s-%s-%d", s.Name, SafeName(j.lock), j.seed),
		FaultsMembers: s.faultsMembers(), ClientShim: shim})
	if err != nil && ctx.Err() != nil {
		return interrupted()
	}
	if err != nil {
		rec.abort()
		return retried(fail(err.Error()), opened)
	}
	execErr := s.Execute(ctx, env, plan)
	execErr = errors.Join(execErr, closeEnv(), env.Err())
	if ctx.Err() != nil {
		return interrupted()
	}
	execErr = errors.Join(execErr, rec.noteError(errorText(execErr), env.Events), rec.commit())
	runErr := errorText(execErr)
	reports, err := reportsOf(env, len(ran), &minimum, runErr)
	if err != nil {
		return fail(errors.Join(execErr, err).Error())
	}
	return eachRan(each(func(x *Result) { x.Retried = opened }), ran, skipped, func(k int, x *Result) {
		judge(x, reports[k], s.CheckEffects(env.Events(k)), runErr, expectation(cfg, s, j, x.Resource))
		x.History, x.Seconds = rec.historyOf(x.Resource), time.Since(began).Seconds()
	})
}

// eachRan fills, in out, the result of each resource that ran with fill
// (k: its index in ran), and marks the others skipped, saying why.
func eachRan(out []Result, ran []string, skipped map[string]string, fill func(k int, x *Result)) []Result {
	for i := range out {
		if k := slices.Index(ran, out[i].Resource); k >= 0 {
			fill(k, &out[i])
		} else {
			out[i].Skipped = skipped[out[i].Resource]
		}
	}
	return out
}

// skipOf says why s does not run on st for a lock whose grants are of
// shape ("" when it does) and, where s moves a client's own clock, the
// clock shim the lock's programs run with.
func skipOf(ctx context.Context, st Store, s Scenario, shape GrantShape) (shim, why string) {
	if why := st.Skip(s); why != "" {
		return "", why
	}
	return clientClockSkip(ctx, s, shape)
}

// planOf is the plan j runs: its seed's, or the one replayed, with the
// run's lease scale and, for a lock run as a process on another store than
// the default, that store.
func planOf(cfg Config, s Scenario, j job) (Plan, error) {
	plan, err := s.Plan(j.seed)
	if cfg.Replay != nil {
		plan, err = *cfg.Replay, nil
	}
	if err != nil {
		return plan, err
	}
	if cfg.LeaseScale > 1 {
		plan.LeaseScale = cfg.LeaseScale
	}
	if strings.HasPrefix(j.lock, process.ExecPrefix) && j.l.Kind.Name != DefaultKind().Name {
		plan.Store = j.l.Kind.Name
	}
	return plan, nil
}

// retried is rs, each saying what the earlier attempts met.
func retried(rs []Result, earlier []string) []Result {
	for i := range rs {
		rs[i].Retried = earlier
	}
	return rs
}

// reportsOf checks each of the run's n histories as its file records it:
// the events, then the run's own error (runErr, "" for none), so that the
// run and a check of its file judge alike.
func reportsOf(env Engine, n int, minimum *history.Minimum, runErr string) ([]models.Report, error) {
	out := make([]models.Report, n)
	for i := range out {
		events := env.Events(i)
		if runErr != "" {
			events = append(events, history.RunErrorEvent(events, runErr))
		}
		rep, err := models.Check(history.Header{Minimum: minimum}, events, models.DefaultTimeout)
		if err != nil {
			return nil, err
		}
		out[i] = rep
	}
	return out, nil
}

// errorText is err's text, or "" for none.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// judge fills in x's verdict from its history's report and effects, the
// run's error and its expectation (see models.Judge).
func judge(x *Result, rep models.Report, effects []EffectResult, runErr string, expected Expect) {
	x.Expected = expected
	x.Checks = rep.Verdicts()
	x.Belief = rep.Belief.Result
	x.Progress = rep.Progress.Result
	x.Effects = effects
	j := models.Judge(rep, x.Effects, runErr, x.Expected)
	x.Verdict, x.Error, x.Skipped, x.Matches = j.Verdict, j.Error, j.Skipped, j.Matches
	if x.Resource == "unfenced" {
		x.LostFraction = rep.LostFraction
	}
}

// expectation is what a configuration is documented to get: the catalog's
// word, except that a known-bad lock must FAIL the scenario that catches it,
// on every resource (elsewhere it is not gated), and that ExpectPass
// expects PASS of everything.
func expectation(cfg Config, s Scenario, j job, resource string) Expect {
	weak := slices.Contains(j.l.Weak, s.Name)
	switch r, bad := cfg.regressions[j.lock]; {
	case cfg.ExpectPass:
		return ExpectPass
	case weak:
		return ExpectFail
	case bad && slices.Contains(r.Scenarios, s.Name):
		return ExpectFail
	case bad:
		return ExpectAny
	}
	return s.Expect(resource)
}

// SafeName is a lock's name made fit to be a file's or a directory's name
// on every platform and anywhere a report goes: a lock run as a process is
// named after its command ("exec:python3 my_lock.py"), which holds a
// colon, slashes and spaces (CI artifact uploaders refuse a colon), so
// whatever is not a letter, a digit, '.', '-', '+' or '_' becomes '_'.
func SafeName(lk string) string {
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '+', r == '_':
			return r
		}
		return '_'
	}, lk)
	if len(safe) > maxSafeName {
		// A long command: its start, and a hash of the whole that tells two
		// such commands apart, within a file name's length on every system.
		h := fnv.New32a()
		h.Write([]byte(lk))
		safe = fmt.Sprintf("%s-%08x", safe[:maxSafeName-9], h.Sum32())
	}
	return safe
}

// maxSafeName is the longest name SafeName makes.
const maxSafeName = 96
