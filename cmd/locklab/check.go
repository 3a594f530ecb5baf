package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/atomicfile"
	"github.com/locklab/locklab/internal/bounded"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenarios"
)

func cmdCheck(args []string, stdout io.Writer) (int, error) {
	flags := newFlagSet("check")
	out := flags.String("out", "", "directory to write a report to: index.html (timeline, story, checks), summary.md, junit.xml, Porcupine's view of each failed check")
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
	if err := knownNames(path, h); err != nil {
		return exitUsage, usagef("%s: %v", path, err)
	}
	report, results, j, err := judgeFile(&h, events)
	if err != nil {
		return exitUsage, usagef("%s: %v", path, err)
	}
	fmt.Fprintf(stdout, "%s: scenario %s, lock %s, resource %s, seed %d, %d events\n",
		path, orDash(h.Scenario), orDash(h.Lock), orDash(h.Resource), h.Seed, len(events))
	for _, v := range report.Verdicts() {
		printVerdict(stdout, v)
	}
	if report.LostFraction != nil {
		fmt.Fprintf(stdout, "lost: %.1f%% of acknowledged increments are missing from the final value\n", 100**report.LostFraction)
	}
	printEffects(stdout, results)
	expect := models.Expect(cmp.Or(h.Expect, string(models.ExpectPass)))
	if missing := models.Vacuous(results); missing != "" && j.Verdict == models.Error {
		fmt.Fprintf(stdout, "  %s\n", missing)
	}
	checked := scenarios.Result{Scenario: h.Scenario, Lock: h.Lock, Resource: h.Resource, Seed: h.Seed,
		Expected: expect, Checks: report.Verdicts(), Effects: results, Belief: report.Belief.Result,
		Progress: report.Progress.Result, Verdict: j.Verdict, Matches: j.Matches, Error: j.Error, Skipped: j.Skipped}
	verdict := "safety: " + string(j.Verdict)
	if models.TooLittleProgress(j.Verdict, report.Verdicts()) {
		verdict = "verdict: FAIL (too little progress; no safety check failed)"
	}
	switch {
	case j.Skipped != "":
		fmt.Fprintf(stdout, "skipped: %s\n", j.Skipped)
	case j.Matches:
		fmt.Fprintf(stdout, "%s (documented %s: as expected)\n", verdict, expect)
	default:
		fmt.Fprintf(stdout, "%s (documented %s: NOT as expected)\n", verdict, expect)
	}
	if *out != "" {
		if err := writeCheckReport(*out, path, checked, args); err != nil {
			var u usageError
			if errors.As(err, &u) {
				return exitUsage, err
			}
			return exitUsage, usagef("--out: %v", err)
		}
		views, _ := filepath.Glob(filepath.Join(*out, "*.porcupine.html"))
		for _, v := range views {
			fmt.Fprintf(stdout, "visualization: %s\n", v)
		}
		fmt.Fprintf(stdout, "report: %s\n", filepath.Join(*out, reports.IndexFile))
	}
	switch {
	case j.Skipped != "":
		return exitOK, nil
	case j.Verdict == models.Unknown:
		return exitUndecided, nil
	case !j.Matches:
		return exitMismatch, nil
	}
	return exitOK, nil
}

// writeCheckReport writes the report of one checked history to dir, with a
// copy of the history beside it so that the report stands on its own.
func writeCheckReport(dir, historyPath string, r scenarios.Result, args []string) error {
	raw, err := bounded.ReadFile(historyPath, bounded.History)
	if err != nil {
		return err
	}
	// Read before the directory is taken: an earlier check's report is
	// emptied, and the history may be its copy.
	rd, err := outDir(dir, "check")
	if err != nil {
		return err
	}
	name := filepath.Base(historyPath)
	if !strings.HasSuffix(name, ".history.jsonl") {
		name += ".history.jsonl"
	}
	copied := filepath.Join(dir, name)
	if err := atomicfile.Write(copied, func(w io.Writer) error { _, err := w.Write(raw); return err }); err != nil {
		rd.removeAll()
		return err
	}
	r.History = copied
	rep, err := scenarios.Report(dir, "locklab check", append([]string{"locklab", "check"}, args...), []scenarios.Result{r}, nil)
	if err != nil {
		rd.removeAll()
		return err
	}
	rep.Complete = true
	if _, err := os.Stat(filepath.Join(filepath.Dir(historyPath), "schedule.json")); err == nil {
		rep.Runs[0].Replay = "go run ./cmd/locklab replay " + filepath.Dir(historyPath)
	}
	return reports.Write(dir, rep)
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
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
	outFlag := flags.String("out", "", "results directory for the replayed run (default locklab-out/<time>, with locklab-out/latest)")
	lockFlag := flags.String("lock", "", "the lock to replay with (default: the one the run recorded; a lock run as a command, "+
		process.ExecPrefix+"…, only when named here or with --allow-exec)")
	allowExec := flags.Bool("allow-exec", false, "run the command a recorded "+process.ExecPrefix+"… lock names")
	if err := parse(flags, args); err != nil {
		return exitUsage, err
	}
	if flags.NArg() != 1 {
		return exitUsage, usagef("replay: want one run directory (locklab-out/…/<scenario>/<lock>/<seed>), got %d arguments", flags.NArg())
	}
	dir := flags.Arg(0)
	plan, err := readSchedule(dir)
	if err != nil {
		return exitUsage, err
	}
	recorded, lockName, resources, err := recordedVerdicts(dir)
	if err != nil {
		return exitUsage, err
	}
	switch {
	case *lockFlag != "":
		lockName = *lockFlag
	case strings.HasPrefix(lockName, process.ExecPrefix) && !*allowExec:
		// A run directory may come from anywhere (a CI artifact): its
		// history must not choose a command for this machine to run.
		return exitUsage, usagef("replay: %s recorded the lock %q, a command locklab would run: name it yourself (--lock %q) or pass --allow-exec",
			dir, lockName, lockName)
	}
	f := runFlags{scenario: plan.Scenario, lock: lockName, resource: strings.Join(resources, ","),
		seed: plan.Seed, runs: 1, parallel: 1, leaseScale: max(plan.LeaseScale, 1), expect: "catalog", store: plan.Store,
		clusterFlags: clusterFlags{members: 3, verbose: *verbose}}
	if path := scenarios.ScriptFile(dir, plan.Scenario); fileExists(path) {
		f.script = path // a run of a scenario file (--script) keeps the file beside its schedule
	}
	cfg, err := f.config()
	if err != nil {
		return exitUsage, err
	}
	cfg.Replay = &plan
	rd, err := outDir(*outFlag, "replay")
	if err != nil {
		return exitUsage, err
	}
	out := rd.Path
	cfg.Out = out
	fmt.Fprintf(stdout, "replaying %s × %s, seed %d\n", plan.Scenario, lockName, plan.Seed)
	sum, err := scenarios.Run(ctx, cfg)
	if err != nil && !errors.Is(err, scenarios.ErrInterrupted) {
		rd.discard() // nothing ran: no directory left behind
		return exitUsage, err
	}
	code := exitOK
	for i, r := range sum.Results {
		same := r.Verdict == recorded[r.Resource]
		mark := "same"
		if !same {
			mark, code = "DIFFERENT", exitMismatch
			note := fmt.Sprintf("replayed %s, recorded %s (%s)", r.Verdict, recorded[r.Resource], filepath.Join(dir, r.Resource+".history.jsonl"))
			sum.Results[i].Error = strings.TrimSpace(note + "\n" + r.Error)
		}
		fmt.Fprintf(stdout, "  %-13s recorded %-7s replayed %-7s %s\n", r.Resource, recorded[r.Resource], r.Verdict, mark)
	}
	if err := writeReport(out, "locklab replay", append([]string{"locklab", "replay"}, args...), sum, nil); err != nil {
		fmt.Fprintln(stderr, "locklab: report:", err)
		return exitMismatch, nil
	}
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(out, reports.IndexFile))
	if !sum.Complete {
		fmt.Fprintln(stderr, "locklab: interrupted")
		return exitUndecided, nil
	}
	if *outFlag == "" {
		linkLatest(out)
	}
	return code, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// knownNames checks what a history's header names: a resource the lab
// has, and, in a file a run wrote (it names the version), a scenario of
// the catalog or one whose file sits beside the history (a run of a
// scenario file keeps it there). A hand-written file may name its
// scenario as it likes; an empty resource passes.
func knownNames(path string, h history.Header) error {
	if h.Resource != "" && !slices.Contains(resource.Names(), h.Resource) {
		return fmt.Errorf("header: resource %q is none of %s", h.Resource, strings.Join(resource.Names(), ", "))
	}
	if h.Version == "" || h.Scenario == "" || fileExists(scenarios.ScriptFile(filepath.Dir(path), h.Scenario)) {
		return nil
	}
	if _, err := scenarios.Lookup(h.Scenario); err != nil {
		return fmt.Errorf("header: scenario %q is not in the catalog and no file of it (%s) is beside the history",
			h.Scenario, filepath.Base(scenarios.ScriptFile("", h.Scenario)))
	}
	return nil
}

// judgeFile judges a history file as the run that wrote it did (see
// models.JudgeHistory). A file from before headers said what they expect
// and claim is held to its catalog scenario's effects (and, with no
// expectation, expected to PASS): h gets them.
func judgeFile(h *history.Header, events []history.Event) (models.Report, []models.EffectResult, models.Judgement, error) {
	if h.Expect == "" && len(h.Effects) == 0 {
		if s, err := scenarios.Lookup(h.Scenario); err == nil {
			h.Effects = s.Effects
		}
	}
	return models.JudgeHistory(*h, events, models.DefaultTimeout)
}

// readSchedule reads and checks the schedule.json of the run directory
// dir, or says in one line what is wrong.
func readSchedule(dir string) (scenarios.Plan, error) {
	raw, err := bounded.ReadFile(filepath.Join(dir, "schedule.json"), bounded.Schedule)
	if errors.Is(err, fs.ErrNotExist) {
		why := "no such directory"
		if info, serr := os.Stat(dir); serr == nil && info.IsDir() {
			why = "it holds no schedule.json"
			if fileExists(filepath.Join(dir, "results.json")) {
				why = "it is a whole run; replay takes one of its configurations"
			}
		}
		return scenarios.Plan{}, usagef("replay: %s: %s (a run directory is one configuration's: <out>/<scenario>/<lock>/<seed>, with its schedule.json)", dir, why)
	}
	if err != nil {
		return scenarios.Plan{}, usagef("replay: %v", err)
	}
	var plan scenarios.Plan
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&plan); err != nil {
		return scenarios.Plan{}, usagef("replay: %s: %v", filepath.Join(dir, "schedule.json"), err)
	}
	if err := plan.Check(); err != nil {
		return scenarios.Plan{}, usagef("replay: %s: %v (nothing was run)", filepath.Join(dir, "schedule.json"), err)
	}
	return plan, nil
}

// recordedVerdicts judges every history a run directory holds, as check
// does: by resource, with the run's lock and resources in order.
func recordedVerdicts(dir string) (map[string]models.Result, string, []string, error) {
	recorded := map[string]models.Result{}
	lockName := ""
	var resources []string
	for _, r := range resource.Names() {
		path := filepath.Join(dir, r+".history.jsonl")
		h, events, err := history.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", nil, usagef("%v", err)
		}
		if err := knownNames(path, h); err != nil {
			return nil, "", nil, usagef("%s: %v", path, err)
		}
		_, _, j, err := judgeFile(&h, events)
		if err != nil {
			return nil, "", nil, usagef("%s: %v", path, err)
		}
		recorded[r], lockName = j.Verdict, h.Lock
		resources = append(resources, r)
	}
	if len(resources) == 0 {
		return nil, "", nil, usagef("replay: %s holds no history", dir)
	}
	return recorded, lockName, resources, nil
}
