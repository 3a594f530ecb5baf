package scenarios

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/reports"
)

// Report is the report of results whose histories lie under dir: each
// result with its scenario's lesson, its history's events and the command
// that replays it. extra are scenarios from outside the catalog among them
// (for their lessons). The command line and the go-test gate both write
// their reports through it.
func Report(dir, title string, command []string, results []Result, extra []Scenario) (reports.Report, error) {
	rep := reports.Report{Title: title, Command: strings.Join(command, " ")}
	for _, r := range results {
		run := reports.Run{Scenario: r.Scenario, Lock: r.Lock, Resource: r.Resource, Seed: r.Seed,
			Expected: string(r.Expected), Verdict: r.Verdict, Matches: r.Matches, Skipped: r.Skipped, Interrupted: r.Interrupted, Error: r.Error,
			Retried: r.Retried, LeaseScale: r.LeaseScale, Progress: r.Progress, Checks: r.Checks, Seconds: r.Seconds}
		for _, ef := range r.Effects {
			run.Effects = append(run.Effects, reports.Effect{Name: ef.Name, Happened: ef.Happened, Missing: ef.Missing})
		}
		if s, err := Lookup(r.Scenario); err == nil {
			run.Lesson = s.Lesson
		}
		for _, s := range extra {
			if s.Name == r.Scenario {
				run.Lesson = s.Lesson
			}
		}
		if r.History != "" {
			_, events, err := history.ReadFile(r.History)
			if err != nil {
				return rep, err
			}
			run.Events = events
			if rel, err := filepath.Rel(dir, r.History); err == nil {
				run.History = rel
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(r.History), "schedule.json")); err == nil {
				run.Replay = "go run ./cmd/locklab replay " + filepath.Dir(r.History)
			}
		}
		rep.Runs = append(rep.Runs, run)
	}
	return rep, nil
}
