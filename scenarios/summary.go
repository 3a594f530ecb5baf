package scenarios

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/atomicfile"
	"github.com/locklab/locklab/models"
)

// Summary is a whole run of the runner.
type Summary struct {
	Version  string   `json:"locklab_version"`
	Complete bool     `json:"complete"`
	Seconds  float64  `json:"seconds"`
	Results  []Result `json:"results"`
	// Campaign is what the run was asked to run, its shard included.
	Campaign *Campaign `json:"campaign,omitempty"`
}

// ExitCode is the command's exit status for s: 0 when every verdict equals
// its expectation, 1 when one does not (an ERROR never does), 3 when a
// checker could not decide, the environment kept a configuration from
// being judged (Result.Environmental, after its last attempt), or the run
// is incomplete.
func (s Summary) ExitCode() int {
	code := 0
	if !s.Complete || s.NothingRan() {
		code = 3 // nothing decided: a gate that tested nothing does not pass
	}
	for _, r := range s.Results {
		switch {
		case r.Skipped != "":
		case r.NotJudged():
			code = 3 // not judged: the machine decided it, not the lock
		case !r.Matches && r.Verdict != models.Unknown:
			return 1
		case r.Verdict == models.Unknown:
			code = 3
		}
	}
	return code
}

// NothingRan reports whether every result was skipped: the run tested
// nothing (say, only Redis locks where redis-server is missing).
func (s Summary) NothingRan() bool {
	return len(s.Results) > 0 && !slices.ContainsFunc(s.Results, func(r Result) bool { return r.Skipped == "" })
}

// WriteSummary writes s as results.json in dir (atomically); an empty dir
// writes nothing.
func WriteSummary(dir string, s Summary) error { return writeSummary(dir, s) }

func writeSummary(dir string, s Summary) error {
	if dir == "" {
		return nil
	}
	return writeJSON(filepath.Join(dir, "results.json"), s)
}

// writeJSON writes v as indented JSON to path, atomically.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// CheckNames says which name of s breaks the grammar of names (nil: none
// does): a results file read back — a shard's, say — names the paths of
// its histories and the words of its report by them.
func (s Summary) CheckNames() error {
	if c := s.Campaign; c != nil {
		if err := checkAll("scenario", c.Scenarios, history.CheckName); err != nil {
			return fmt.Errorf("campaign: %w", err)
		}
		if err := checkAll("resource", c.Resources, history.CheckName); err != nil {
			return fmt.Errorf("campaign: %w", err)
		}
		if err := checkAll("lock", c.Locks, func(_, n string) error { return history.CheckLockName(n) }); err != nil {
			return fmt.Errorf("campaign: %w", err)
		}
	}
	for i, r := range s.Results {
		err := errors.Join(history.CheckName("scenario", r.Scenario), history.CheckName("resource", r.Resource),
			history.CheckLockName(r.Lock))
		if err != nil {
			return fmt.Errorf("result %d: %w", i+1, err)
		}
	}
	return nil
}

// checkAll checks each name with check.
func checkAll(what string, names []string, check func(what, name string) error) error {
	for _, n := range names {
		if err := check(what, n); err != nil {
			return err
		}
	}
	return nil
}
