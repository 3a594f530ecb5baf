package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/locklab/locklab/history"
)

// recording is where one run's files go: its directory ("" when nothing
// is written), one history file per resource and the sinks that feed them.
type recording struct {
	dir     string
	writers []*history.Writer
	sinks   []history.Sink
}

// record writes the run's schedule (and a scenario file beside it) and
// opens one history file per resource, its header saying what the run is
// and how it is to be judged.
func record(cfg Config, resources []string, members int, s Scenario, j job, plan Plan) (*recording, error) {
	lk, seed := j.lock, j.seed
	rec := &recording{sinks: make([]history.Sink, len(resources))}
	if cfg.Out == "" {
		return rec, nil
	}
	rec.dir = filepath.Join(cfg.Out, s.Name, SafeName(lk), fmt.Sprint(seed))
	if err := writeJSON(filepath.Join(rec.dir, "schedule.json"), plan); err != nil {
		return nil, err
	}
	// A scenario from a file goes beside its schedule, so that replay can
	// rebuild it (as ScriptFile names it).
	if s.text != "" {
		if err := os.WriteFile(ScriptFile(rec.dir, s.Name), []byte(s.text), 0o644); err != nil {
			return nil, err
		}
	}
	minimum := s.minimum()
	for i, r := range resources {
		w, err := history.Create(filepath.Join(rec.dir, r+".history.jsonl"), history.Header{
			Scenario: s.Name, Seed: seed, Lock: lk, Resource: r, Members: members, Version: Version,
			Minimum: &minimum, Expect: string(expectation(cfg, s, j, r)), Effects: s.Effects})
		if err != nil {
			rec.abort()
			return nil, err
		}
		rec.writers = append(rec.writers, w)
		var sink history.Sink = w
		if cfg.wrapSink != nil {
			sink = cfg.wrapSink(sink)
		}
		rec.sinks[i] = sink
	}
	return rec, nil
}

// noteError ends every history file with the run's own error (runErr;
// nothing for ""), after the last of events (each resource's history), so
// that a check of the file judges it as the run did (see
// history.ObservedRunError). Every client has stopped: nothing else writes.
func (rec *recording) noteError(runErr string, events func(i int) []history.Event) error {
	if runErr == "" {
		return nil
	}
	var errs []error
	for i, w := range rec.sinks {
		if w != nil {
			errs = append(errs, w.Write(history.RunErrorEvent(events(i), runErr)))
		}
	}
	return errors.Join(errs...)
}

// commit puts every history file in place.
func (rec *recording) commit() error {
	var errs []error
	for _, w := range rec.writers {
		errs = append(errs, w.Commit())
	}
	return errors.Join(errs...)
}

// abort drops every history file: a run that did not finish leaves none
// that looks complete.
func (rec *recording) abort() {
	for _, w := range rec.writers {
		w.Abort()
	}
}

// ScriptFile is where a run of a scenario from a file keeps the file: in
// the run's directory, named after the scenario.
func ScriptFile(dir, scenario string) string { return filepath.Join(dir, scenario+".txt") }

// historyOf is where resource's history file is ("" when none is kept).
func (rec *recording) historyOf(resource string) string {
	if rec.dir == "" {
		return ""
	}
	return filepath.Join(rec.dir, resource+".history.jsonl")
}
