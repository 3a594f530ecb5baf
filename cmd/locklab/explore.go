package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/internal/atomicfile"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/script"
)

// exploreFlags are explore's flags.
type exploreFlags struct {
	cf                                   clusterFlags
	lock, resource, faults, out, shardOf string
	cases, steps, ttl                    int
	seed                                 uint64
	shrink                               time.Duration
}

func (f *exploreFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.lock, "lock", "queue", "the lock to explore (a built-in or known-bad one, on etcd or Redis)")
	fs.StringVar(&f.resource, "resource", "fenced", "the resource whose checks must pass (comma list, or all)")
	fs.IntVar(&f.cases, "cases", 50, fmt.Sprintf("cases to draw, 1 to %d", maxCases))
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the drawn cases (the same seed draws the same cases)")
	fs.IntVar(&f.steps, "steps", 10, fmt.Sprintf("most actions drawn per case, 1 to %d (the closing steps come on top)", maxSteps))
	fs.StringVar(&f.faults, "faults", "all", "fault kinds to draw: "+strings.Join(script.WalkFaults(), ", ")+" (comma list), or all")
	fs.IntVar(&f.ttl, "ttl", 1, fmt.Sprintf("lease TTL in seconds of the drawn scripts (operations' timeouts scale with it), 1 to %d: 2–5 gives a slow or busy machine time to renew", maxTTL))
	fs.DurationVar(&f.shrink, "shrink-time", 2*time.Minute, fmt.Sprintf("most time spent shrinking a failing case, more than 0 and at most %v", maxShrink))
	fs.StringVar(&f.out, "out", "", "where to write the shrunk failing script (default locklab-out/explore/LOCK-RESOURCE-SEED.txt)")
	fs.StringVar(&f.shardOf, "shard", "", "K/N: draw only shard K of N of the --cases (case i goes to shard i mod N + 1), and write a results file for locklab merge; auto/N takes K from JOB_COMPLETION_INDEX")
	f.cf.register(fs)
}

// cmdExplore draws scenario scripts against one lock and one resource until
// a case breaks the resource's safety (or the lock's progress once faults
// heal), shrinks it, and writes the shrunk script. A shard of an
// exploration also writes its results file, found or not.
func cmdExplore(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	var f exploreFlags
	fs := newFlagSet("explore")
	f.register(fs)
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	if fs.NArg() > 0 {
		return exitUsage, usagef("explore: unexpected argument %q", fs.Arg(0))
	}
	camp, factory, err := f.campaign()
	if err != nil {
		return exitUsage, err
	}
	external, logger, err := f.cf.check()
	if err != nil {
		return exitUsage, err
	}
	if camp.Faults, err = drawable(camp.Faults, f.faults == "all", external != nil, factory.l.Kind.Can, f.ttl); err != nil {
		return exitUsage, err
	}
	servers, err := scenarios.CaseServers(ctx, scenarios.Config{External: external, Members: f.cf.members, Logger: logger},
		factory.l.Kind.Name)
	if err != nil {
		return exitUsage, err
	}
	if servers != nil {
		defer servers.Close()
	}
	cfg := explore.Config{Lock: f.lock, Open: factory.opener(servers, factory.resources()), Property: explore.Safe(camp.Resources...),
		Cases: f.cases, Seed: f.seed, MaxSteps: f.steps, ShrinkTime: f.shrink,
		Walk:     script.WalkOptions{Faults: camp.Faults, TTL: f.ttl},
		Progress: stdout, Shard: camp.Shard, Shards: camp.Shards}
	fmt.Fprintf(stdout, "locklab explore: %s, property %q, %d cases of at most %d actions, faults %s, seed %d%s\n",
		f.lock, cfg.Property.Name, f.cases, f.steps, strings.Join(camp.Faults, ","), f.seed, shardNote(camp))
	res, err := explore.Run(ctx, cfg)
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		fmt.Fprintf(stderr, "locklab: interrupted after %d cases: nothing found so far, nothing written\n", res.Cases)
		return exitUndecided, nil
	case err != nil:
		return exitUndecided, fmt.Errorf("explore: the lab could not run a case: %w", err)
	}
	return f.finish(args, camp, res, stdout)
}

// campaign checks the flags and says what they ask to draw, with the
// lock's factory.
func (f *exploreFlags) campaign() (explore.Campaign, exploreLock, error) {
	camp := explore.Campaign{Lock: f.lock, Cases: f.cases, Seed: f.seed, Steps: f.steps, TTL: f.ttl, Members: f.cf.members}
	factory, err := lookupAnyLock(f.lock)
	if err != nil {
		return camp, factory, err
	}
	if camp.Resources, err = pick("resource", f.resource, factory.resources()); err != nil {
		return camp, factory, err
	}
	if !factory.onDefault() {
		if f.cf.members != storeMembers || f.cf.endpoints != "" {
			return camp, factory, usagef("--lock %s: a lock on %s is explored on servers the lab starts for it (%d), not on etcd (--members, --endpoints)",
				f.lock, factory.l.Kind.Label, storeMembers)
		}
		camp.Members = storeMembers
	}
	if camp.Faults, err = pick("faults", f.faults, script.WalkFaults()); err != nil {
		return camp, factory, err
	}
	if err := checkExploreCounts(f.cases, f.steps, f.ttl, camp.Members); err != nil {
		return camp, factory, err
	}
	if f.shrink <= 0 || f.shrink > maxShrink {
		return camp, factory, usagef("--shrink-time: want more than 0 and at most %v, got %v", maxShrink, f.shrink)
	}
	name := fmt.Sprintf("%s-%s-%d", f.lock, strings.Join(camp.Resources, "+"), f.seed)
	if f.shardOf != "" {
		shard, err := scenarios.ParseShard(f.shardOf, os.Getenv)
		if err != nil {
			return camp, factory, usagef("%v", err)
		}
		if shard.Count > f.cases {
			return camp, factory, usagef("--shard %s: %d shards of %d cases leave some with none", f.shardOf, shard.Count, f.cases)
		}
		camp.Shard, camp.Shards = shard.Index, shard.Count
		name += fmt.Sprintf("-shard-%d-of-%d", shard.Index, shard.Count)
	}
	if f.out == "" {
		f.out = filepath.Join(outRoot, "explore", scenarios.SafeName(name)+".txt")
	}
	return camp, factory, nil
}

// finish prints what the exploration found, writes the shrunk failing
// script (and a shard's results file), and returns the exit status.
func (f *exploreFlags) finish(args []string, camp explore.Campaign, res explore.Result, stdout io.Writer) (int, error) {
	perMinute := float64(res.Runs) / res.Elapsed.Minutes()
	sum := explore.Summary{Version: scenarios.Version, Campaign: camp, Complete: true, Cases: res.Cases,
		Faulted: res.Faulted, Runs: res.Runs}
	if res.Failed != nil {
		if err := writeFailing(f.out, args, res.Failed.Script); err != nil {
			return exitUsage, err
		}
		sum.Failures = []explore.Failure{{Case: res.FailedCase, Message: res.Message, Actions: res.Failed.Actions,
			Script: filepath.Base(f.out)}}
	}
	if camp.Shards > 1 {
		file := exploreResults(f.out)
		if err := writeJSONFile(file, sum); err != nil {
			return exitUsage, err
		}
		fmt.Fprintf(stdout, "results: %s (locklab merge --out DIR with the other shards' results)\n", file)
	}
	if res.Failed == nil {
		fmt.Fprintf(stdout, "%d cases held, %d with a fault (%d scripts run, %.1f per minute, %s)\n",
			res.Cases, res.Faulted, res.Runs, perMinute, res.Elapsed.Round(time.Second))
		if res.Faulted == 0 {
			// Nothing was put to the test: that is no verdict.
			return exitUndecided, fmt.Errorf("explore: no case drew a fault (%s): draw more cases (--cases) or more "+
				"actions per case (--steps)", strings.Join(camp.Faults, ","))
		}
		return exitOK, nil
	}
	fmt.Fprintf(stdout, "\nFAIL at case %d: %s\nshrunk to %d actions, %d steps (%d scripts run, %.1f per minute, %s):\n  %s\n",
		res.FailedCase, strings.ReplaceAll(res.Message, "\n", "\n  "), len(res.Failed.Actions), res.Failed.Steps(), res.Runs, perMinute,
		res.Elapsed.Round(time.Second), strings.Join(res.Failed.Actions, "; "))
	fmt.Fprintf(stdout, "script: %s\nrun it again: locklab run --script %s --lock %s --resource %s\n", f.out, f.out, f.lock,
		strings.Join(camp.Resources, ","))
	return exitMismatch, nil
}

// shardNote names an exploration's shard, for its first line.
func shardNote(c explore.Campaign) string {
	if c.Shards <= 1 {
		return ""
	}
	return fmt.Sprintf(", shard %d/%d", c.Shard, c.Shards)
}

// exploreResults is the results file of an exploration whose failing
// script goes to out: beside it, named after it.
func exploreResults(out string) string {
	return strings.TrimSuffix(out, filepath.Ext(out)) + ".results.json"
}

// writeJSONFile writes v as indented JSON to path, atomically, making its
// directory.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
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

// checkExploreCounts says what is wrong with explore's counts, if anything.
func checkExploreCounts(cases, steps, ttl, members int) error {
	switch {
	case ttl < 1 || ttl > maxTTL:
		return usagef("--ttl: want 1 to %d s, got %d", maxTTL, ttl)
	case cases < 1 || cases > maxCases:
		return usagef("--cases: want 1 to %d, got %d", maxCases, cases)
	case steps < 1 || steps > maxSteps:
		return usagef("--steps: want 1 to %d, got %d", maxSteps, steps)
	case members < 3:
		return usagef("--members: explore's scripts use three members, got %d", members)
	}
	return nil
}
