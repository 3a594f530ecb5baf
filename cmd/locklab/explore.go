package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/internal/atomicfile"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/script"
	"go.uber.org/zap"
)

// cmdExplore draws scenario scripts against one lock and one resource until
// a case breaks the resource's safety (or the lock's progress once faults
// heal), shrinks it, and writes the shrunk script.
func cmdExplore(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	var (
		cf                            clusterFlags
		lk, resource, faultKinds, out string
		cases, steps, ttl             int
		seed                          uint64
		shrink                        time.Duration
	)
	fs := newFlagSet("explore")
	fs.StringVar(&lk, "lock", "queue", "the lock to explore (a built-in or known-bad one)")
	fs.StringVar(&resource, "resource", "fenced", "the resource whose checks must pass (comma list, or all)")
	fs.IntVar(&cases, "cases", 50, "cases to draw")
	fs.Uint64Var(&seed, "seed", 1, "seed of the drawn cases (the same seed draws the same cases)")
	fs.IntVar(&steps, "steps", 10, "most actions drawn per case (the closing steps come on top)")
	fs.StringVar(&faultKinds, "faults", "all", "fault kinds to draw: "+strings.Join(script.WalkFaults(), ", ")+" (comma list), or all")
	fs.IntVar(&ttl, "ttl", 1, "lease TTL in seconds of the drawn scripts (operations' timeouts scale with it): 2–5 gives a slow or busy machine time to renew")
	fs.DurationVar(&shrink, "shrink-time", 2*time.Minute, "most time spent shrinking a failing case")
	fs.StringVar(&out, "out", "", "where to write the shrunk failing script (default reports/explore/LOCK-RESOURCE-SEED.txt)")
	cf.register(fs)
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	if fs.NArg() > 0 {
		return exitUsage, usagef("explore: unexpected argument %q", fs.Arg(0))
	}
	factory, err := lookupAnyLock(lk)
	if err != nil {
		return exitUsage, err
	}
	resources, err := pick("resource", resource, lock.ResourceNames())
	if err != nil {
		return exitUsage, err
	}
	kinds, err := pick("faults", faultKinds, script.WalkFaults())
	if err != nil {
		return exitUsage, err
	}
	if err := checkExploreCounts(cases, steps, ttl, cf.members); err != nil {
		return exitUsage, err
	}
	if out == "" {
		out = filepath.Join("reports", "explore", fileName(fmt.Sprintf("%s-%s-%d", lk, strings.Join(resources, "+"), seed))+".txt")
	}
	external, logger, err := cf.check()
	if err != nil {
		return exitUsage, err
	}
	if kinds, err = drawable(kinds, faultKinds == "all", external != nil, ttl); err != nil {
		return exitUsage, err
	}
	c, err := openCluster(ctx, external, cf.members, logger)
	if err != nil {
		return exitUsage, err
	}
	defer c.Close()
	p := explore.Safe(resources...)
	fmt.Fprintf(stdout, "locklab explore: %s, property %q, %d cases of at most %d actions, faults %s, seed %d\n",
		lk, p.Name, cases, steps, strings.Join(kinds, ","), seed)
	res, err := explore.Run(ctx, explore.Config{Cluster: c, Lock: lk, Factory: factory, Property: p, Cases: cases, Seed: seed,
		MaxSteps: steps, ShrinkTime: shrink, Walk: script.WalkOptions{Faults: kinds, TTL: ttl}, Progress: stdout})
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		fmt.Fprintf(stderr, "locklab: interrupted after %d cases: nothing found so far, nothing written\n", res.Cases)
		return exitUndecided, nil
	case err != nil:
		return exitUndecided, fmt.Errorf("explore: the lab could not run a case: %w", err)
	}
	perMinute := float64(res.Runs) / res.Elapsed.Minutes()
	if res.Failed == nil {
		fmt.Fprintf(stdout, "%d cases held, %d with a fault (%d scripts run, %.1f per minute, %s)\n",
			res.Cases, res.Faulted, res.Runs, perMinute, res.Elapsed.Round(time.Second))
		if res.Faulted == 0 {
			// Nothing was put to the test: that is no verdict.
			return exitUndecided, fmt.Errorf("explore: no case drew a fault (%s): draw more cases (--cases) or more "+
				"actions per case (--steps)", strings.Join(kinds, ","))
		}
		return exitOK, nil
	}
	if err := writeFailing(out, args, res.Failed.Script); err != nil {
		return exitUsage, err
	}
	fmt.Fprintf(stdout, "\nFAIL at case %d: %s\nshrunk to %d actions, %d steps (%d scripts run, %.1f per minute, %s):\n  %s\n",
		res.Cases, strings.ReplaceAll(res.Message, "\n", "\n  "), len(res.Failed.Actions), res.Failed.Steps(), res.Runs, perMinute,
		res.Elapsed.Round(time.Second), strings.Join(res.Failed.Actions, "; "))
	fmt.Fprintf(stdout, "script: %s\nrun it again: locklab run --script %s --lock %s\n", out, out, lk)
	return exitMismatch, nil
}

// lookupAnyLock finds a built-in or a known-bad lock by name.
func lookupAnyLock(lk string) (lock.Factory, error) {
	if f, err := lock.Lookup(lk); err == nil {
		return f, nil
	}
	if r, ok := lock.LookupRegression(lk); ok {
		return r.Factory, nil
	}
	return nil, usagef("--lock: unknown lock %q (locks: %s)", lk, strings.Join(append(lock.Names(), lock.RegressionNames()...), ", "))
}

// writeFailing writes a shrunk failing script to path, atomically, headed
// by the command that found it.
func writeFailing(path string, args []string, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "# %s\n%s", strings.Join(append([]string{"locklab", "explore"}, args...), " "), text)
		return err
	})
}

// openCluster connects to the user's cluster, or starts an embedded one of
// members.
func openCluster(ctx context.Context, external *cluster.External, members int, logger *zap.Logger) (*cluster.Cluster, error) {
	if external != nil {
		return cluster.Connect(ctx, *external)
	}
	return cluster.Start(ctx, cluster.Config{Members: members, Logger: logger})
}

// checkExploreCounts says what is wrong with explore's counts, if anything.
func checkExploreCounts(cases, steps, ttl, members int) error {
	switch {
	case ttl < 1:
		return usagef("--ttl: a lease lives at least 1 s, got %d", ttl)
	case cases < 1:
		return usagef("--cases: want at least 1, got %d", cases)
	case steps < 1:
		return usagef("--steps: want at least 1, got %d", steps)
	case members < 3:
		return usagef("--members: explore's scripts use three members, got %d", members)
	}
	return nil
}

// drawable is kinds less those the run cannot draw: an isolated member on
// a user's own cluster (not the lab's to partition), a slow link on leases
// shorter than 3 s (see script.WalkSlow). Asked for by name, either is a
// usage error; left out of "all", it is dropped.
func drawable(kinds []string, all, external bool, ttl int) ([]string, error) {
	cannot := func(k string) string {
		switch {
		case k == script.WalkIsolate && external:
			return "the lab cannot cut the members of your own cluster off from each other"
		case k == script.WalkSlow && ttl < 3:
			return "a slow link is drawn only on leases of 3 s or more (--ttl 3)"
		}
		return ""
	}
	var out []string
	for _, k := range kinds {
		why := cannot(k)
		switch {
		case why == "":
			out = append(out, k)
		case !all:
			return nil, usagef("--faults %s: %s", k, why)
		}
	}
	return out, nil
}

// fileName makes name safe as a file's name on every platform: a lock run
// as a process is named by its command line ("exec:python3 my_lock.py").
func fileName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_', r == '+':
			return r
		}
		return '_'
	}, name)
}
