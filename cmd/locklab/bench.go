package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/internal/atomicfile"
	"github.com/locklab/locklab/lock"
)

// benchReport is bench.json.
type benchReport struct {
	Members  int        `json:"members"`
	External bool       `json:"external"`
	Duration string     `json:"duration"`
	Results  []benchRow `json:"results"`
}

// benchRow is one measurement, or why it failed.
type benchRow struct {
	bench.Result
	Error string `json:"error,omitempty"`
}

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	var cf clusterFlags
	fs := newFlagSet("bench")
	lockFlag := fs.String("lock", "all", "lock name, comma list, or all")
	clientsFlag := fs.String("clients", "1,2,10,30", "contending clients, a comma list")
	duration := fs.Duration("duration", 3*time.Second, "how long each measurement runs")
	ttl := fs.Int("ttl", 5, "each client's lease, in seconds")
	out := fs.String("out", "", "directory to write bench.json to (default: print only)")
	cf.register(fs)
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	if fs.NArg() > 0 {
		return exitUsage, usagef("bench: unexpected argument %q", fs.Arg(0))
	}
	locks, err := pick("lock", *lockFlag, lock.Names())
	if err != nil {
		return exitUsage, err
	}
	clients, err := parseCounts(*clientsFlag)
	if err != nil {
		return exitUsage, err
	}
	switch {
	case *duration <= 0:
		return exitUsage, usagef("--duration: want a positive duration, got %s", *duration)
	case *ttl < 1:
		return exitUsage, usagef("--ttl: want at least 1 second, got %d", *ttl)
	}
	external, logger, err := cf.check()
	if err != nil {
		return exitUsage, err
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return exitUsage, usagef("--out: %v", err)
		}
	}

	var c *cluster.Cluster
	if external != nil {
		c, err = cluster.Connect(ctx, *external)
	} else {
		c, err = cluster.Start(ctx, cluster.Config{Members: cf.members, Logger: logger})
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "locklab: interrupted before measuring anything")
		return exitUndecided, nil
	}
	if err != nil {
		return exitUsage, err
	}
	defer c.Close()

	where := fmt.Sprintf("an embedded %d-member cluster", cf.members)
	if external != nil {
		where = "the cluster at " + cf.endpoints
	}
	fmt.Fprintf(stdout, "locklab bench: %d lock(s) × %d client count(s), %s each, on %s (about %s)\n\n",
		len(locks), len(clients), *duration, where, (time.Duration(len(locks)*len(clients)) * *duration).Round(time.Second))
	printBenchHeader(stdout)
	report := benchReport{Members: len(c.Members()), External: external != nil, Duration: duration.String()}
	baseline := map[int]float64{} // etcd-mutex locks/s by clients, once measured
	failed := 0
	for _, name := range locks {
		f, _ := lock.Lookup(name)
		for _, n := range clients {
			res, err := bench.Run(ctx, c, bench.Config{Lock: name, Factory: f, Clients: n, Duration: *duration, TTL: *ttl})
			if ctx.Err() != nil {
				fmt.Fprintln(stderr, "locklab: interrupted: the measurements above are all there is; no bench.json written")
				return exitUndecided, nil
			}
			if err != nil {
				// A lock that fails with nothing faulted is a finding, not
				// bad input: say so, go on, and exit 1 at the end.
				fmt.Fprintf(stdout, "%-17s %7d   failed: %v\n", name, n, err)
				report.Results = append(report.Results, benchRow{Result: bench.Result{Lock: name, Clients: n}, Error: err.Error()})
				failed++
				continue
			}
			if name == "etcd-mutex" {
				baseline[n] = res.LocksPerSec
			}
			printBenchRow(stdout, res, baseline[n])
			report.Results = append(report.Results, benchRow{Result: res})
		}
	}
	fmt.Fprintln(stdout, "\nhand-off: from a holder's Release call to the next grant (mean); same: grants that went back to the client that just released;\nrequests: unary etcd requests per acquire+release; elections: leader changes during the measurement (nothing is faulted: a loaded machine)")
	if *out != "" {
		path := filepath.Join(*out, "bench.json")
		err := atomicfile.Write(path, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(report)
		})
		if err != nil {
			return exitUsage, err
		}
		fmt.Fprintln(stdout, "results in", path)
	}
	if failed > 0 {
		return exitMismatch, fmt.Errorf("bench: %d measurement(s) failed", failed)
	}
	return exitOK, nil
}

// parseCounts parses "1,2,10" into positive counts.
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, usagef("--clients: want a comma list of positive counts, got %q", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func printBenchHeader(w io.Writer) {
	fmt.Fprintf(w, "%-17s %7s %9s %8s %12s %12s %12s %12s %6s %9s %9s\n",
		"lock", "clients", "locks/s", "×mutex", "acquire p50", "acquire p99", "hand-off", "hand-off p99", "same", "requests", "elections")
}

func printBenchRow(w io.Writer, r bench.Result, baseline float64) {
	ratio := "-"
	if baseline > 0 && r.Lock != "etcd-mutex" {
		ratio = fmt.Sprintf("%.1f×", r.LocksPerSec/baseline)
	}
	fmt.Fprintf(w, "%-17s %7d %9.1f %8s %12s %12s %12s %12s %5.0f%% %9.2f %9d\n",
		r.Lock, r.Clients, r.LocksPerSec, ratio, msString(r.Acquire.P50), msString(r.Acquire.P99),
		msString(r.Handoff.Mean), msString(r.Handoff.P99), 100*r.SameClient, r.Requests, r.Elections)
}

func msString(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}
