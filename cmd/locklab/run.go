package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/bounded"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenarios"
)

// clusterFlags choose the cluster: an embedded one, or the user's own.
type clusterFlags struct {
	members           int
	endpoints         string
	cacert, cert, key string
	user, password    string
	verbose           bool
}

func (f *clusterFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.members, "members", 3, fmt.Sprintf("members of the embedded cluster, 1 to %d", maxMembers))
	fs.StringVar(&f.endpoints, "endpoints", "", "client URLs of your own cluster (instead of an embedded one)")
	fs.StringVar(&f.cacert, "cacert", "", "CA file for --endpoints over TLS")
	fs.StringVar(&f.cert, "cert", "", "client certificate for --endpoints")
	fs.StringVar(&f.key, "key", "", "client key for --endpoints")
	fs.StringVar(&f.user, "user", "", "user name for --endpoints")
	fs.StringVar(&f.password, "password", "", "password for --endpoints")
	fs.BoolVar(&f.verbose, "verbose", false, "show etcd's and the clients' logs")
}

// maxMembers is the most members an embedded cluster may have: etcd
// advises at most 7 in production; 9 leaves room to teach why.
const maxMembers = 9

// maxTTL is the longest lease, in seconds, a run's scenarios may be written
// for: every wait of a scenario grows with it, and at 30 s the catalog runs
// for hours.
const maxTTL = 30

// check validates the flags and returns the external cluster they name
// (nil: embedded) and the logger (nil: silent).
func (f *clusterFlags) check() (*cluster.External, *zap.Logger, error) {
	if f.members < 1 || f.members > maxMembers {
		return nil, nil, usagef("--members: want 1 to %d, got %d", maxMembers, f.members)
	}
	var x *cluster.External
	if f.endpoints != "" {
		x = &cluster.External{Endpoints: strings.Split(f.endpoints, ","),
			CAFile: f.cacert, CertFile: f.cert, KeyFile: f.key, Username: f.user, Password: f.password}
	}
	if !f.verbose {
		return x, nil, nil
	}
	lg, err := zap.NewDevelopment()
	return x, lg, err
}

// runFlags are the flags of run (and replay, which takes a subset).
type runFlags struct {
	clusterFlags
	scenario, lock, resource   string
	seed                       uint64
	runs, parallel, leaseScale int
	expect, out, script        string
	shard                      string
	redis                      string
	store                      string
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.scenario, "scenario", "all", "scenario name, comma list, or all")
	fs.StringVar(&f.lock, "lock", "all", "lock name, comma list, or all")
	fs.StringVar(&f.resource, "resource", "all", "resource name, comma list, or all")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the schedules")
	fs.IntVar(&f.runs, "runs", 1, fmt.Sprintf("runs per scenario × lock (seeds seed, seed+1, …), 1 to %d", maxRuns))
	fs.IntVar(&f.leaseScale, "ttl", 1, fmt.Sprintf("lease TTL in seconds of the scenarios written for 1 s (the others scale with it), 1 to %d: 2–5 gives a slow or busy machine time to renew", maxTTL))
	fs.IntVar(&f.parallel, "parallel", runParallel(),
		fmt.Sprintf("configurations run at once, 1 to %d, each on its own embedded cluster (or sharing --endpoints); one per CPU when a lock runs as a process", maxParallel))
	fs.StringVar(&f.expect, "expect", "catalog", "catalog: each configuration's documented verdict; pass: every one must pass (CI gate)")
	fs.StringVar(&f.out, "out", "", "results directory (default locklab-out/<time>, with locklab-out/latest)")
	fs.StringVar(&f.shard, "shard", "", "K/N: run shard K of N of the jobs (scenario × lock × seed), for locklab merge; auto/N takes K from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)")
	fs.StringVar(&f.script, "script", "", "scenario file(s) to run, comma list, in the format of scenarios/scripts/ (then --scenario defaults to them alone)")
	f.registerStoreFlags(fs)
	fs.StringVar(&f.store, "store", scenarios.DefaultKind().Name, "the store "+process.ExecPrefix+"COMMAND locks run on: "+storesHelp())
	f.clusterFlags.register(fs)
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// helpError is a request for a command's help (-h, --help): its flags are
// printed to standard output and the exit status is 0.
type helpError struct{ fs *flag.FlagSet }

func (h helpError) Error() string { return h.fs.Name() + ": help requested" }

// print writes the command's synopsis and every flag with its meaning.
func (h helpError) print(w io.Writer) {
	fmt.Fprintf(w, "Usage: locklab %s\n", synopsis[h.fs.Name()])
	n := 0
	h.fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	h.fs.SetOutput(w)
	h.fs.PrintDefaults()
	h.fs.SetOutput(io.Discard)
}

// synopsis is each command's one-line usage.
var synopsis = map[string]string{
	"run":     "run [flags]   run scenarios × locks × resources and check every history",
	"check":   "check HISTORY.jsonl [flags]   check a recorded history offline",
	"replay":  "replay RUN_DIR [flags]   re-run a recorded schedule and compare verdicts",
	"bench":   "bench [flags]   locks/s, acquire and hand-off latency under contention",
	"explore": "explore [flags]   draw scenario scripts until one breaks a resource's checks, shrink it, write it",
	"list":    "list   scenarios, locks, resources and faults, one line each",
	"explain": "explain SCENARIO|LOCK   the scenario's lesson, step by step; a lock's story",
	"lab":     "lab [flags]   the live lab: drive a real cluster's clients and faults from a web page",
	"merge":   "merge --out DIR RUN_DIR… | SHARD.results.json…   one report of a campaign's shards (run --shard K/N), as the unsharded run writes it; or one summary of an exploration's (explore --shard K/N)",
}

// parse parses args, flags before or after the positional arguments,
// turning flag errors into one-line usage errors and -h/--help into a
// helpError. The positional arguments are left in fs.Args().
func parse(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return helpError{fs}
		} else if err != nil {
			return usagef("%s: %v", fs.Name(), err)
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return fs.Parse(append([]string{"--"}, positional...))
}

// pick resolves a name / comma list / all against the valid names; extra
// names are accepted by name but not part of all.
func pick(flagName, value string, valid []string, extra ...string) ([]string, error) {
	switch strings.TrimSpace(value) {
	case "all":
		return valid, nil
	case "":
		// An empty list names nothing: running everything instead would
		// pass off a typo'd variable as a full run.
		return nil, usagef("--%s: empty: nothing to run (name one, a comma list, or all)", flagName)
	}
	var out []string
	for _, v := range strings.Split(value, ",") {
		v = strings.TrimSpace(v)
		if flagName == "lock" && strings.HasPrefix(v, process.ExecPrefix) {
			if _, err := scenarios.ExecLock("", strings.TrimPrefix(v, process.ExecPrefix)); err != nil {
				return nil, usagef("--lock: %v", err)
			}
			out = append(out, v) // a lock run as a process
			continue
		}
		if !slices.Contains(valid, v) && !slices.Contains(extra, v) {
			also := ""
			if flagName == "lock" {
				also = "; or " + process.ExecPrefix + "COMMAND, your own lock run as a process"
			}
			return nil, usagef("--%s: unknown %s %q (valid: %s, all%s)", flagName, flagName, v, strings.Join(append(slices.Clone(valid), extra...), ", "), also)
		}
		out = append(out, v)
	}
	return out, nil
}

// readScripts reads the scenario files of --script. A scenario is named
// after its file (without .txt); one whose name a catalog scenario has is
// prefixed "script-", so that it is never mistaken for the catalog's.
func readScripts(list string) ([]scenarios.Scenario, error) {
	if list == "" {
		return nil, nil
	}
	var out []scenarios.Scenario
	for _, path := range strings.Split(list, ",") {
		path = strings.TrimSpace(path)
		text, err := bounded.ReadFile(path, bounded.Script)
		if err != nil {
			return nil, usagef("--script: %v", err)
		}
		name := strings.TrimSuffix(filepath.Base(path), ".txt")
		if err := history.CheckName("scenario", name); err != nil {
			return nil, usagef("--script %s: a scenario is named after its file: %v", path, err)
		}
		if _, err := scenarios.Lookup(name); err == nil {
			name = "script-" + name
		}
		for _, s := range out {
			if s.Name == name {
				return nil, usagef("--script: two scripts are named %q", name)
			}
		}
		s, err := scenarios.FromScript(name, path, string(text))
		if err != nil {
			return nil, usagef("%v", err)
		}
		out = append(out, s)
	}
	return out, nil
}

// config turns flags into a runner configuration.
func (f *runFlags) config() (scenarios.Config, error) {
	cfg := scenarios.Config{Seed: f.seed, Runs: f.runs, Members: f.members, ExpectPass: f.expect == "pass",
		Parallel: f.parallel, LeaseScale: f.leaseScale}
	if f.leaseScale < 1 || f.leaseScale > maxTTL {
		return cfg, usagef("--ttl: want 1 to %d s, got %d", maxTTL, f.leaseScale)
	}
	if f.shard != "" {
		shard, err := scenarios.ParseShard(f.shard, os.Getenv)
		if err != nil {
			return cfg, usagef("%v", err)
		}
		cfg.Shard = shard
	}
	var err error
	if cfg.Extra, err = readScripts(f.script); err != nil {
		return cfg, err
	}
	var extra []string
	for _, s := range cfg.Extra {
		extra = append(extra, s.Name)
	}
	if f.script != "" && (f.scenario == "" || f.scenario == "all") {
		cfg.Scenarios = extra
	} else if cfg.Scenarios, err = pick("scenario", f.scenario, scenarios.Names(), extra...); err != nil {
		return cfg, err
	}
	all, more := lockNames()
	if cfg.Locks, err = pick("lock", f.lock, all, more...); err != nil {
		return cfg, err
	}
	if cfg.Resources, err = pick("resource", f.resource, resource.Names()); err != nil {
		return cfg, err
	}
	switch {
	case f.expect != "catalog" && f.expect != "pass":
		return cfg, usagef("--expect: want catalog or pass, got %q", f.expect)
	case f.runs < 1 || f.runs > maxRuns:
		return cfg, usagef("--runs: want 1 to %d, got %d", maxRuns, f.runs)
	case f.parallel < 1 || f.parallel > maxParallel:
		return cfg, usagef("--parallel: want 1 to %d, got %d", maxParallel, f.parallel)
	}
	cfg.External, cfg.Logger, err = f.clusterFlags.check()
	if err != nil {
		return cfg, err
	}
	if err := f.enoughMembers(cfg); err != nil {
		return cfg, err
	}
	if f.redis != "" {
		cfg.Redis = strings.Split(f.redis, ",")
	}
	if cfg.Store, err = f.checkStore(cfg.Locks); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// checkStore checks --store: a store the lab has, named for locks run as
// processes.
func (f *runFlags) checkStore(locks []string) (string, error) {
	etcd := scenarios.DefaultKind().Name
	if f.store == "" { // a command without --store: the default store's
		f.store = etcd
	}
	var stores []string
	for _, k := range scenarios.Kinds() {
		stores = append(stores, k.Name)
	}
	switch {
	case !slices.Contains(stores, f.store):
		return "", usagef("--store: unknown store %q (stores: %s)", f.store, strings.Join(stores, ", "))
	case f.store != etcd && !slices.ContainsFunc(locks, isExec):
		return "", usagef("--store %s: it names the store of %sCOMMAND locks, and --lock names none", f.store, process.ExecPrefix)
	}
	return f.store, nil
}

// storesHelp lists the stores a lock run as a process can run on, each
// with what its locks run on, for a flag's help.
func storesHelp() string {
	var out []string
	for _, k := range scenarios.Kinds() {
		out = append(out, fmt.Sprintf("%s (%s)", k.Name, k.Label))
	}
	return strings.Join(out, ", ") + "; the program finds its store in its environment (docs/any-language.md)"
}

// isExec says whether name is a lock run as a process.
func isExec(name string) bool { return strings.HasPrefix(name, process.ExecPrefix) }

// enoughMembers checks, before anything starts, that the embedded cluster
// --members asks for has the members every chosen scenario needs for a
// lock on etcd (a Redis lock's servers are the lab's own).
func (f *runFlags) enoughMembers(cfg scenarios.Config) error {
	def := scenarios.DefaultKind()
	onDefault := func(l string) bool {
		if k, ok := scenarios.KindOf(l); ok {
			return k.Name == def.Name
		}
		return !isExec(l) || f.store == def.Name // a user's script's lock, or a process on the default store
	}
	if cfg.External != nil || !slices.ContainsFunc(cfg.Locks, onDefault) {
		return nil
	}
	for _, name := range cfg.Scenarios {
		s, err := scenarios.Lookup(name)
		if i := slices.IndexFunc(cfg.Extra, func(x scenarios.Scenario) bool { return x.Name == name }); i >= 0 {
			s, err = cfg.Extra[i], nil
		}
		if err == nil && s.For(def) && s.Members > f.members {
			return usagef("--members %d: scenario %s needs %d members", f.members, name, s.Members)
		}
	}
	return nil
}

// lockNames are the locks --lock all runs — the default store's locks
// people use — and every other lock a run can name by name: its adapters,
// every known-bad lock, every other store's locks.
func lockNames() (all, more []string) {
	def := scenarios.DefaultKind().Name
	for _, b := range scenarios.Backends() {
		for _, d := range b.Locks() {
			if b.Name() == def && !d.Adapter && d.Bad == nil {
				all = append(all, d.Name)
			} else {
				more = append(more, d.Name)
			}
		}
	}
	return all, more
}

// backendLocks are the locks of every store, by name.
func backendLocks() []string {
	all, more := lockNames()
	return append(all, more...)
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	var f runFlags
	fs := newFlagSet("run")
	f.register(fs)
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	if fs.NArg() > 0 {
		return exitUsage, usagef("run: unexpected argument %q", fs.Arg(0))
	}
	cfg, err := f.config()
	if err != nil {
		return exitUsage, err
	}
	if err := preflight(ctx, cfg); err != nil {
		if ctx.Err() != nil { // Ctrl-C: nothing ran, and no lock was found wanting
			fmt.Fprintln(stderr, "locklab: interrupted before the run began: nothing ran")
			return exitUndecided, nil
		}
		return exitUsage, err
	}
	if !isSet(fs, "parallel") && slices.ContainsFunc(cfg.Locks, isExec) {
		// Each configuration of a lock run as a process starts a program
		// per client: an interpreter or a JVM starting costs a core, and
		// the lab cannot tell a program starved of CPU from a slow lock (eight
		// at once on 2 cores: 14 of 684 results ERROR; one per CPU: none).
		cfg.Parallel = min(cfg.Parallel, runtime.NumCPU())
	}
	rd, err := outDir(f.out, "run")
	if err != nil {
		return exitUsage, err
	}
	out := rd.Path
	cfg.Out = out
	shard := ""
	if cfg.Shard.Count > 1 {
		shard = ", shard " + cfg.Shard.String()
	}
	fmt.Fprintf(stdout, "locklab %s: %d scenario(s) × %d lock(s) × %d resource(s), seed %d%s, results in %s\n",
		scenarios.Version, len(cfg.Scenarios), len(cfg.Locks), len(cfg.Resources), cfg.Seed, shard, out)
	con := newConsole(stdout)
	cfg.Finished = con.finished
	sum, err := scenarios.Run(ctx, cfg)
	con.close()
	switch {
	case errors.Is(err, scenarios.ErrInterrupted):
		printSummary(stdout, sum)
		if rerr := writeReport(out, "locklab run", append([]string{"locklab", "run"}, args...), sum, cfg.Extra); rerr != nil {
			fmt.Fprintln(stderr, "locklab: report:", rerr)
		}
		fmt.Fprintln(stderr, "locklab: interrupted: results are incomplete (results.json and the report say so)")
		return exitUndecided, nil
	case err != nil:
		// Nothing ran: leave no report directory, nor the parents made for
		// it (locklab-out/), each removed only if still empty.
		rd.discard()
		return exitUsage, err
	}
	printSummary(stdout, sum)
	if err := writeReport(out, "locklab run", append([]string{"locklab", "run"}, args...), sum, cfg.Extra); err != nil {
		fmt.Fprintln(stderr, "locklab: report:", err)
		return exitMismatch, nil
	}
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(out, reports.IndexFile))
	if f.out == "" {
		linkLatest(out)
	}
	return sum.ExitCode(), nil
}

// writeReport writes the human-readable report of sum into dir: each run
// with its scenario's lesson, its history and the command that replays it.
func writeReport(dir, title string, command []string, sum scenarios.Summary, extra []scenarios.Scenario) error {
	rep, err := scenarios.Report(dir, title, command, sum.Results, extra)
	if err != nil {
		return err
	}
	rep.Complete, rep.Seconds = sum.Complete, sum.Seconds
	return reports.Write(dir, rep)
}

// runParallel is how many configurations a run runs at once unless told:
// four per CPU, at most 8. A configuration mostly waits — for leases to
// lapse, faults to hold, elections — and a run is the only work of its
// process, so it packs more than the library's default
// (scenarios.DefaultParallel, which a go test shares with other
// packages): on 2 cores the default run took 93 s at 4 and 56 s at 8,
// with the same verdicts. A busy machine's lapses are the environment's,
// and run again (see docs/verdicts.md, Busy machines).
func runParallel() int { return min(4*runtime.NumCPU(), 8) }

// isSet reports whether the flag called name was given.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// preflight has every lock run as a process acquire and release once on
// a scratch cluster before anything else starts: a program that is
// missing, crashes or answers nothing is one line naming it and what it
// said, not a whole run of the same error.
func preflight(ctx context.Context, cfg scenarios.Config) error {
	for _, name := range cfg.Locks {
		if !isExec(name) {
			continue
		}
		if err := scenarios.PreflightOn(ctx, cfg, name); err != nil {
			return usagef("--lock %s: %v", name, err)
		}
	}
	return nil
}
