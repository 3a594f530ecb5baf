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
	"github.com/locklab/locklab/scenarios"
)

// cmdExplore draws scenario scripts against one lock and one resource until
// a case breaks the resource's safety (or the lock's progress once faults
// heal), shrinks it, and writes the shrunk script.
func cmdExplore(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	var (
		cf                            clusterFlags
		lk, resource, faultKinds, out string
		cases, steps                  int
		seed                          uint64
		shrink                        time.Duration
	)
	fs := newFlagSet("explore")
	fs.StringVar(&lk, "lock", "queue", "the lock to explore (a built-in or known-bad one)")
	fs.StringVar(&resource, "resource", "fenced", "the resource whose checks must pass (comma list, or all)")
	fs.IntVar(&cases, "cases", 50, "cases to draw")
	fs.Uint64Var(&seed, "seed", 1, "seed of the drawn cases (the same seed draws the same cases)")
	fs.IntVar(&steps, "steps", 10, "most actions drawn per case (the closing steps come on top)")
	fs.StringVar(&faultKinds, "faults", "all", "fault kinds to draw: pause, cut, expire, crash (comma list), or all")
	fs.DurationVar(&shrink, "shrink-time", 2*time.Minute, "most time spent shrinking a failing case")
	fs.StringVar(&out, "out", "", "where to write the shrunk failing script (default testdata/explore-LOCK-RESOURCE-SEED.txt)")
	cf.register(fs)
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	if fs.NArg() > 0 {
		return exitUsage, usagef("explore: unexpected argument %q", fs.Arg(0))
	}
	factory, err := lock.Lookup(lk)
	if err != nil {
		r, ok := lock.LookupRegression(lk)
		if !ok {
			return exitUsage, usagef("--lock: unknown lock %q (locks: %s)", lk, strings.Join(append(lock.Names(), lock.RegressionNames()...), ", "))
		}
		factory = r.Factory
	}
	resources, err := pick("resource", resource, lock.ResourceNames())
	if err != nil {
		return exitUsage, err
	}
	kinds, err := pick("faults", faultKinds, scenarios.WalkFaults)
	if err != nil {
		return exitUsage, err
	}
	switch {
	case cases < 1:
		return exitUsage, usagef("--cases: want at least 1, got %d", cases)
	case steps < 1:
		return exitUsage, usagef("--steps: want at least 1, got %d", steps)
	case cf.members < 3:
		return exitUsage, usagef("--members: explore's scripts use three members, got %d", cf.members)
	}
	if out == "" {
		out = filepath.Join("testdata", fmt.Sprintf("explore-%s-%s-%d.txt", lk, strings.Join(resources, "+"), seed))
	}
	external, logger, err := cf.check()
	if err != nil {
		return exitUsage, err
	}
	var c *cluster.Cluster
	if external != nil {
		c, err = cluster.Connect(ctx, *external)
	} else {
		c, err = cluster.Start(ctx, cluster.Config{Members: cf.members, Logger: logger})
	}
	if err != nil {
		return exitUsage, err
	}
	defer c.Close()
	p := explore.Safe(resources...)
	fmt.Fprintf(stdout, "locklab explore: %s, property %q, %d cases of at most %d actions, faults %s, seed %d\n",
		lk, p.Name, cases, steps, strings.Join(kinds, ","), seed)
	res, err := explore.Run(ctx, explore.Config{Cluster: c, Lock: lk, Factory: factory, Property: p, Cases: cases, Seed: seed,
		MaxSteps: steps, ShrinkTime: shrink, Walk: scenarios.WalkOptions{Faults: kinds}, Progress: stdout})
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		fmt.Fprintf(stderr, "locklab: interrupted after %d cases: nothing found so far, nothing written\n", res.Cases)
		return exitUndecided, nil
	case err != nil:
		return exitUndecided, fmt.Errorf("explore: the lab could not run a case: %w", err)
	}
	perMinute := float64(res.Runs) / res.Elapsed.Minutes()
	if res.Failed == nil {
		fmt.Fprintf(stdout, "%d cases held (%d scripts run, %.1f per minute, %s)\n", res.Cases, res.Runs, perMinute, res.Elapsed.Round(time.Second))
		return exitOK, nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return exitUsage, err
	}
	if err := atomicfile.Write(out, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "# %s\n%s", strings.Join(append([]string{"locklab", "explore"}, args...), " "), res.Failed.Script)
		return err
	}); err != nil {
		return exitUsage, err
	}
	fmt.Fprintf(stdout, "\nFAIL at case %d: %s\nshrunk to %d actions, %d steps (%d scripts run, %.1f per minute, %s):\n  %s\n",
		res.Cases, strings.ReplaceAll(res.Message, "\n", "\n  "), len(res.Failed.Actions), res.Failed.Steps(), res.Runs, perMinute,
		res.Elapsed.Round(time.Second), strings.Join(res.Failed.Actions, "; "))
	fmt.Fprintf(stdout, "script: %s\nrun it again: locklab run --script %s --lock %s\n", out, out, lk)
	return exitMismatch, nil
}
