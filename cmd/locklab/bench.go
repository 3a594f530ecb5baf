package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/clusterproc"
	"github.com/locklab/locklab/internal/atomicfile"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenarios"
)

// benchReport is bench.json.
type benchReport struct {
	Members  int    `json:"members"`
	External bool   `json:"external"`
	Fsync    bool   `json:"fsync"`
	Duration string `json:"duration"`
	Work     string `json:"work"`
	// ClusterProcess: the embedded cluster ran in a child process, so the
	// clients' CPU is measured apart from the cluster's.
	ClusterProcess bool `json:"cluster_process"`
	// Floor is one committed write plus one linearizable read, back to
	// back: the least a hand-off can cost on this cluster.
	Floor bench.Distribution `json:"floor"`
	// StoreFloors are the hand-off floors of the other stores' servers the
	// locks of those stores were measured on, one per store, if any was.
	StoreFloors []storeFloor `json:"store_floors,omitempty"`
	Results     []benchRow   `json:"results"`
}

// storeFloor is a store's hand-off floor: what it was measured on, and how.
type storeFloor struct {
	Store string             `json:"store"`
	On    string             `json:"on"`
	Floor bench.Distribution `json:"floor"`
}

// benchRow is one measurement, or why it failed.
type benchRow struct {
	bench.Result
	Error string `json:"error,omitempty"`
}

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	bf, err := parseBenchFlags(args)
	if err != nil {
		return exitUsage, err
	}
	cf := bf.cluster
	c, clusterCPU, stop, err := benchCluster(ctx, cf, bf.external, bf.logger, bf.fsync, bf.inProcess)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "locklab: interrupted before measuring anything")
		return exitUndecided, nil
	}
	if err != nil {
		return exitUsage, err
	}
	defer stop()

	where := fmt.Sprintf("an embedded %d-member cluster", cf.members)
	switch {
	case bf.external != nil:
		where = "the cluster at " + cf.endpoints
	case clusterCPU != nil:
		where += " in a child process"
	}
	if bf.fsync {
		where += ", fsync on"
	}
	fmt.Fprintf(stdout, "locklab bench: %d lock(s) × %d client count(s), %s each, on %s (about %s)\n",
		len(bf.locks), len(bf.clients), bf.duration, where, (time.Duration(len(bf.locks)*len(bf.clients)) * bf.duration).Round(time.Second))
	floor, err := bench.Floor(ctx, c, floorSamples)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "locklab: interrupted before measuring anything")
		return exitUndecided, nil
	}
	if err != nil {
		return exitUsage, err
	}
	fmt.Fprintf(stdout, "hand-off floor on this cluster (one committed write + one linearizable read, %d samples): p50 %s ms, p90 %s ms, p99 %s ms\n\n",
		floorSamples, ms(floor.P50), ms(floor.P90), ms(floor.P99))
	printBenchHeader(stdout)
	report := benchReport{Members: len(c.Members()), External: bf.external != nil, Fsync: bf.fsync, Duration: bf.duration.String(),
		Work: bf.work.String(), ClusterProcess: clusterCPU != nil, Floor: floor}
	failed, err := measureAll(ctx, c, bf, clusterCPU, &report, stdout)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "locklab: interrupted: the measurements above are all there is; no bench.json written")
		return exitUndecided, nil
	}
	fmt.Fprint(stdout, benchLegend)
	if bf.out != "" {
		if err := writeBench(bf.out, report, where, args, stdout); err != nil {
			return exitUsage, err
		}
	}
	if failed > 0 {
		return exitMismatch, fmt.Errorf("bench: %d measurement(s) failed", failed)
	}
	if !slices.ContainsFunc(report.Results, func(r benchRow) bool { return r.Error == "" }) {
		return exitMismatch, errors.New("bench: nothing was measured")
	}
	return exitOK, nil
}

// benchFlags is what bench was asked to do.
type benchFlags struct {
	cluster          clusterFlags
	external         *cluster.External
	logger           *zap.Logger
	locks            []string
	clients          []int
	duration, work   time.Duration
	ttl              int
	fsync, inProcess bool
	out              string
	// store is where exec: locks run: etcd, redis or redlock.
	store string
	// defaultCounts: --clients was not given. A default count at which no
	// lock was granted (a lock run as a process, its processes starting
	// slower than the measurement) is reported as not measured, with how
	// to ask for it, and does not fail the command.
	defaultCounts bool
}

// parseBenchFlags reads bench's command line and checks every value.
func parseBenchFlags(args []string) (benchFlags, error) {
	var bf benchFlags
	fs := newFlagSet("bench")
	lockFlag := fs.String("lock", "all", "lock name, comma list, or all")
	clientsFlag := fs.String("clients", "1,10,100", fmt.Sprintf("contending clients, a comma list of counts from 1 to %d", maxBenchClients))
	fs.DurationVar(&bf.duration, "duration", 3*time.Second, fmt.Sprintf("how long each measurement runs, more than 0 and at most %v", maxBenchDuration))
	fs.DurationVar(&bf.work, "work", 0, fmt.Sprintf("how long each holder works while it holds the lock, 0 to %v", maxBenchDuration))
	fs.IntVar(&bf.ttl, "ttl", 5, fmt.Sprintf("each client's lease, in seconds, 1 to %d", maxTTL))
	fs.BoolVar(&bf.fsync, "fsync", false, "turn the embedded cluster's fsync on (realistic commit costs)")
	fs.BoolVar(&bf.inProcess, "in-process", false, "run the embedded cluster in this process (CPU is then clients and cluster together)")
	fs.StringVar(&bf.out, "out", "", "directory to write bench.json and bench.html to (default: print only)")
	fs.StringVar(&bf.store, "store", scenarios.DefaultKind().Name, "the store "+process.ExecPrefix+"COMMAND locks run on: "+storesHelp())
	bf.cluster.register(fs)
	if err := parse(fs, args); err != nil {
		return bf, err
	}
	if fs.NArg() > 0 {
		return bf, usagef("bench: unexpected argument %q", fs.Arg(0))
	}
	var err error
	more := etcdlock.Adapters()
	for _, st := range bench.Stores() {
		more = append(more, st.Locks()...)
	}
	if bf.locks, err = pick("lock", *lockFlag, etcdlock.Names(), more...); err != nil {
		return bf, err
	}
	if bf.store, err = (&runFlags{store: bf.store}).checkStore(bf.locks); err != nil {
		return bf, err
	}
	if bf.clients, err = parseCounts(*clientsFlag); err != nil {
		return bf, err
	}
	bf.defaultCounts = true
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "clients" {
			bf.defaultCounts = false
		}
	})
	switch {
	case bf.duration <= 0 || bf.duration > maxBenchDuration:
		return bf, usagef("--duration: want more than 0 and at most %v, got %s", maxBenchDuration, bf.duration)
	case bf.ttl < 1 || bf.ttl > maxTTL:
		return bf, usagef("--ttl: want 1 to %d seconds, got %d", maxTTL, bf.ttl)
	case bf.work < 0 || bf.work > maxBenchDuration:
		return bf, usagef("--work: want 0 to %v, got %s", maxBenchDuration, bf.work)
	}
	if bf.external, bf.logger, err = bf.cluster.check(); err != nil {
		return bf, err
	}
	if bf.out != "" {
		if _, err := outDir(bf.out, "bench"); err != nil {
			return bf, err
		}
	}
	if bf.external != nil && bf.fsync {
		return bf, usagef("--fsync: applies to an embedded cluster, not to --endpoints")
	}
	return bf, nil
}

// measureAll measures every lock × client count, printing each row and
// adding it to report, and says how many measurements failed. It stops
// when ctx ends.
func measureAll(ctx context.Context, c *cluster.Cluster, bf benchFlags, clusterCPU func() (time.Duration, error), report *benchReport, stdout io.Writer) (int, error) {
	var section func()
	if bf.work > 0 {
		section = func() { time.Sleep(bf.work) } // the holder's work: a wait, as I/O is
	}
	baseline := map[int]float64{} // etcd-mutex locks/s by clients, once measured
	failed := 0
	for _, name := range bf.locks {
		f, _ := etcdlock.Lookup(name)
		measure := func(cfg bench.Config) (bench.Result, error) { return bench.Run(ctx, c, cfg) }
		floor := report.Floor.P50
		if r, ok, err := openStoreBench(ctx, name, bf.store, stdout, report); ok {
			if err != nil {
				fmt.Fprintf(stdout, "%-17s %7s   not measured: %v\n", name, "-", err)
				report.Results = append(report.Results, benchRow{Result: bench.Result{Lock: name}, Error: "not measured: " + err.Error()})
				continue
			}
			defer r.Close()
			measure, floor = r.Measure, r.Floor.P50
		}
		for _, n := range bf.clients {
			res, err := measure(bench.Config{Lock: name, Factory: f, Clients: n, Duration: bf.duration, TTL: bf.ttl,
				Section: section, ClusterCPU: clusterCPU})
			if ctx.Err() != nil {
				return failed, ctx.Err()
			}
			if err != nil && bf.defaultCounts && errors.Is(err, bench.ErrNoGrant) {
				why := fmt.Sprintf("not measured: %v; ask for it with --lock %s --clients %d --duration %s", err, name, n, 10*bf.duration)
				fmt.Fprintf(stdout, "%-17s %7d   %s\n", name, n, why)
				report.Results = append(report.Results, benchRow{Result: bench.Result{Lock: name, Clients: n}, Error: why})
				continue
			}
			if err != nil {
				// A lock that fails with nothing faulted is a finding, not
				// bad input: say so, go on, and exit 1 at the end.
				fmt.Fprintf(stdout, "%-17s %7d   failed: %v\n", name, n, err)
				report.Results = append(report.Results, benchRow{Result: bench.Result{Lock: name, Clients: n}, Error: "failed: " + err.Error()})
				failed++
				continue
			}
			if name == "etcd-mutex" {
				baseline[n] = res.LocksPerSec
			}
			printBenchRow(stdout, res, baseline[n], floor)
			report.Results = append(report.Results, benchRow{Result: res})
		}
	}
	return failed, nil
}

// writeBench writes bench.json and the page of plots into dir.
func writeBench(dir string, report benchReport, where string, args []string, stdout io.Writer) error {
	path := filepath.Join(dir, "bench.json")
	err := atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	})
	if err != nil {
		return err
	}
	page := benchPage(report, where, strings.Join(append([]string{"locklab", "bench"}, args...), " "))
	if err := reports.WriteBench(dir, page); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "results in %s, plots in %s\n", path, filepath.Join(dir, reports.BenchFile))
	return nil
}

// parseCounts parses "1,2,10" into positive counts.
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxBenchClients {
			return nil, usagef("--clients: want a comma list of counts from 1 to %d, got %q", maxBenchClients, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchPage is what bench.html shows of a report.
func benchPage(r benchReport, where, command string) reports.Bench {
	latency := func(d bench.Distribution) reports.Latency {
		return reports.Latency{P50: d.P50, P70: d.P70, P90: d.P90, P99: d.P99, Samples: d.Samples}
	}
	b := reports.Bench{Title: "locklab bench", Command: command, Where: where, Floor: latency(r.Floor)}
	for _, x := range r.Results {
		b.Rows = append(b.Rows, reports.BenchRow{Lock: x.Lock, Clients: x.Clients, LocksPerSec: x.LocksPerSec,
			Acquire: latency(x.Acquire), Handoff: latency(x.Handoff), SameClient: x.SameClient, Wakeups: x.Wakeups,
			FutileWakeups: x.FutileWakeups, Requests: x.Requests, ClientsCPU: x.CPU.Clients, ClusterCPU: x.CPU.Cluster,
			CPUShared: x.CPU.Shared, Error: x.Error})
	}
	return b
}

// floorSamples is how many write+read pairs measure the hand-off floor.
const floorSamples = bench.FloorSamples

// openStoreBench starts the servers of the registered bench store whose
// lock is the one called name (a lock run as a process: on store), if any
// is, and prints and records its hand-off floor the first time; false for
// a lock of the cluster bench runs on.
func openStoreBench(ctx context.Context, name, store string, stdout io.Writer, report *benchReport) (*bench.Opened, bool, error) {
	for _, st := range bench.Stores() {
		o, ok, err := st.Open(ctx, name, store)
		if !ok {
			continue
		}
		if err == nil && !slices.ContainsFunc(report.StoreFloors, func(f storeFloor) bool { return f.On == o.FloorOf }) {
			report.StoreFloors = append(report.StoreFloors, storeFloor{Store: st.Name, On: o.FloorOf, Floor: o.Floor})
			fmt.Fprintf(stdout, "hand-off floor on %s: p50 %s ms, p90 %s ms, p99 %s ms\n",
				o.FloorOf, ms(o.Floor.P50), ms(o.Floor.P90), ms(o.Floor.P99))
		}
		return o, true, err
	}
	return nil, false, nil
}

// benchCluster opens the cluster a bench measures on: the user's, or an
// embedded one — by default in a child process, so that the clients' CPU can
// be told from the cluster's. clusterCPU is nil when it cannot be. stop
// closes it all.
func benchCluster(ctx context.Context, cf clusterFlags, external *cluster.External, logger *zap.Logger, fsync, inProcess bool) (
	c *cluster.Cluster, clusterCPU func() (time.Duration, error), stop func(), err error) {
	switch {
	case external != nil:
		c, err = cluster.Connect(ctx, *external)
	case inProcess:
		c, err = cluster.Start(ctx, cluster.Config{Members: cf.members, Fsync: fsync, Logger: logger})
	default:
		p, perr := clusterproc.Start(ctx, clusterproc.Config{Members: cf.members, Fsync: fsync, Verbose: cf.verbose})
		if perr != nil {
			return nil, nil, nil, perr
		}
		c, err = cluster.Connect(ctx, cluster.External{Endpoints: p.Endpoints(), Logger: logger})
		if err != nil {
			p.Close()
			return nil, nil, nil, err
		}
		return c, p.CPU, func() { c.Close(); p.Close() }, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return c, nil, func() { c.Close() }, nil
}

const benchLegend = `
acquire: Acquire's call to return; hand-off: a holder's Release call to the next grant; ×floor: hand-off p50 over the floor's p50;
same: grants that went back to the client that just released; wake/rel: waiters woken per release (watch events, polls),
futile: of those, the ones that did not get the lock (the herd); req: unary etcd requests (Redis, ZooKeeper: requests sent) per acquire+release;
CPU: per 1000 locks, of the clients (this process: clients, locks, their proxies) and of the cluster (its process);
elect: leader changes during the measurement (nothing is faulted: a loaded machine)
`

func printBenchHeader(w io.Writer) {
	fmt.Fprintf(w, "%-17s %7s %8s %7s  %-31s  %-16s %6s %5s %5s %6s %5s  %-17s %5s\n",
		"", "", "", "", "acquire (ms)", "hand-off (ms)", "", "", "", "", "", "CPU (ms/1000)", "")
	fmt.Fprintf(w, "%-17s %7s %8s %7s  %7s %7s %7s %7s  %7s %8s %6s %5s %5s %6s %5s  %8s %8s %5s\n",
		"lock", "clients", "locks/s", "×mutex", "p50", "p70", "p90", "p99", "p50", "p99", "×floor",
		"same", "wake", "futile", "req", "clients", "cluster", "elect")
}

func printBenchRow(w io.Writer, r bench.Result, baseline float64, floor time.Duration) {
	ratio := "-"
	if baseline > 0 && r.Lock != "etcd-mutex" {
		ratio = fmt.Sprintf("%.1f×", r.LocksPerSec/baseline)
	}
	overFloor := "-"
	if floor > 0 && r.Handoff.P50 > 0 {
		overFloor = fmt.Sprintf("%.1f×", float64(r.Handoff.P50)/float64(floor))
	}
	clientsCPU, clusterCPU := ms(r.CPU.Clients), ms(r.CPU.Cluster)
	switch {
	case r.CPU.Unmeasured:
		clientsCPU, clusterCPU = "-", "-"
	case r.CPU.Shared:
		clientsCPU, clusterCPU = ms(r.CPU.Clients)+"*", "*"
	}
	fmt.Fprintf(w, "%-17s %7d %8.1f %7s  %7s %7s %7s %7s  %7s %8s %6s %4.0f%% %5.2f %6.2f %5.2f  %8s %8s %5d\n",
		r.Lock, r.Clients, r.LocksPerSec, ratio,
		ms(r.Acquire.P50), ms(r.Acquire.P70), ms(r.Acquire.P90), ms(r.Acquire.P99),
		ms(r.Handoff.P50), ms(r.Handoff.P99), overFloor,
		100*r.SameClient, r.Wakeups, r.FutileWakeups, r.Requests, clientsCPU, clusterCPU, r.Elections)
}

// ms prints a duration in milliseconds, to a precision that suits it.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
