package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

func cmdCheck(args []string, stdout io.Writer) (int, error) {
	flags := newFlagSet("check")
	out := flags.String("out", "", "directory for Porcupine's visualization of each failed check")
	if err := parse(flags, args); err != nil {
		return exitUsage, err
	}
	if flags.NArg() != 1 {
		return exitUsage, usagef("check: want one history file, got %d arguments", flags.NArg())
	}
	path := flags.Arg(0)
	h, events, err := history.ReadFile(path)
	if err != nil {
		return exitUsage, usagef("%v", err)
	}
	report, err := models.Check(h, events, models.DefaultTimeout)
	if err != nil {
		return exitUsage, usagef("%s: %v", path, err)
	}
	fmt.Fprintf(stdout, "%s: scenario %s, lock %s, resource %s, seed %d, %d events\n",
		path, orDash(h.Scenario), orDash(h.Lock), orDash(h.Resource), h.Seed, len(events))
	for _, v := range report.Verdicts() {
		printVerdict(stdout, v)
		if *out != "" && v.Result == models.Fail && v.HasVisualization() {
			if err := os.MkdirAll(*out, 0o755); err != nil {
				return exitUsage, usagef("--out: %v", err)
			}
			file := filepath.Join(*out, v.Check+".html")
			if err := v.WriteVisualization(file); err != nil {
				return exitUsage, err
			}
			fmt.Fprintf(stdout, "    visualization: %s\n", file)
		}
	}
	if report.LostFraction != nil {
		fmt.Fprintf(stdout, "lost: %.1f%% of acknowledged increments are missing from the final value\n", 100**report.LostFraction)
	}
	result := report.Result()
	// A history of a catalog scenario is held to the scenario's effects, as
	// the run that recorded it was.
	if s, err := scenarios.Lookup(h.Scenario); err == nil {
		effects := s.CheckEffects(events)
		printEffects(stdout, effects)
		var missing string
		if result, missing = scenarios.JudgeEffects(result, effects); result == models.Error {
			fmt.Fprintf(stdout, "  %s\n", missing)
		}
	}
	fmt.Fprintf(stdout, "safety: %s\n", result)
	switch result {
	case models.Fail, models.Error:
		return exitMismatch, nil
	case models.Unknown:
		return exitUndecided, nil
	}
	return exitOK, nil
}

func printVerdict(w io.Writer, v models.Verdict) {
	fmt.Fprintf(w, "  %-14s %-7s %s\n", v.Check, v.Result, v.Explanation)
	for _, e := range v.Evidence {
		fmt.Fprintf(w, "      %s\n", e)
	}
}

// printEffects lists a scenario's effects and whether each happened.
func printEffects(w io.Writer, effects []scenarios.EffectResult) {
	for _, ef := range effects {
		if ef.Happened {
			fmt.Fprintf(w, "  effect         yes     %s\n", ef.Name)
		} else {
			fmt.Fprintf(w, "  effect         NO      %s: %s\n", ef.Name, ef.Missing)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cmdReplay re-runs the schedule recorded in a run directory
// (<out>/<scenario>/<lock>/<seed>) and compares the verdicts with those of
// the recorded histories.
func cmdReplay(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	flags := newFlagSet("replay")
	verbose := flags.Bool("verbose", false, "show etcd's and the clients' logs")
	if err := parse(flags, args); err != nil {
		return exitUsage, err
	}
	if flags.NArg() != 1 {
		return exitUsage, usagef("replay: want one run directory (reports/…/<scenario>/<lock>/<seed>), got %d arguments", flags.NArg())
	}
	dir := flags.Arg(0)
	raw, err := os.ReadFile(filepath.Join(dir, "schedule.json"))
	if err != nil {
		return exitUsage, usagef("replay: %v", err)
	}
	var plan scenarios.Plan
	if err := json.Unmarshal(raw, &plan); err != nil {
		return exitUsage, usagef("replay: %s: %v", filepath.Join(dir, "schedule.json"), err)
	}
	if plan.Faults != nil {
		if _, err := faults.ParseSchedule(mustJSON(plan.Faults)); err != nil {
			return exitUsage, usagef("replay: %s: %v", filepath.Join(dir, "schedule.json"), err)
		}
	}
	recorded := map[string]models.Result{}
	lockName := ""
	var resources []string
	for _, r := range lock.ResourceNames() {
		path := filepath.Join(dir, r+".history.jsonl")
		h, events, err := history.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return exitUsage, usagef("%v", err)
		}
		rep, err := models.Check(h, events, models.DefaultTimeout)
		if err != nil {
			return exitUsage, usagef("%s: %v", path, err)
		}
		recorded[r], lockName = rep.Result(), h.Lock
		resources = append(resources, r)
	}
	if len(resources) == 0 {
		return exitUsage, usagef("replay: %s holds no history", dir)
	}
	f := runFlags{scenario: plan.Scenario, lock: lockName, resource: strings.Join(resources, ","),
		seed: plan.Seed, runs: 1, parallel: 1, expect: "catalog", clusterFlags: clusterFlags{members: 3, verbose: *verbose}}
	cfg, err := f.config(io.Discard)
	if err != nil {
		return exitUsage, err
	}
	cfg.Replay = &plan
	fmt.Fprintf(stdout, "replaying %s × %s, seed %d\n", plan.Scenario, lockName, plan.Seed)
	sum, err := scenarios.Run(ctx, cfg)
	if err != nil && !errors.Is(err, scenarios.ErrInterrupted) {
		return exitUsage, err
	}
	code := exitOK
	for _, r := range sum.Results {
		same := r.Verdict == recorded[r.Resource]
		mark := "same"
		if !same {
			mark, code = "DIFFERENT", exitMismatch
		}
		fmt.Fprintf(stdout, "  %-13s recorded %-7s replayed %-7s %s\n", r.Resource, recorded[r.Resource], r.Verdict, mark)
	}
	if !sum.Complete {
		fmt.Fprintln(stderr, "locklab: interrupted")
		return exitUndecided, nil
	}
	return code, nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
