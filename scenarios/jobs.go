package scenarios

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/resource"
)

// jobs checks what cfg asks to run, fills in its defaults and the locks'
// factories (the built-in ones, the known-bad ones, the caller's), and
// lists every scenario × lock × seed whose lesson is one for the lock's
// store.
func (cfg *Config) jobs() ([]job, []string, error) {
	switch {
	case len(cfg.Scenarios) == 0:
		return nil, nil, fmt.Errorf("%w: no scenario", ErrNothingToRun)
	case len(cfg.Locks) == 0:
		return nil, nil, fmt.Errorf("%w: no lock", ErrNothingToRun)
	case len(cfg.Resources) == 0:
		return nil, nil, fmt.Errorf("%w: no resource", ErrNothingToRun)
	}
	for _, r := range cfg.Resources {
		if !slices.Contains(resource.Names(), r) {
			return nil, nil, fmt.Errorf("unknown resource %q (resources: %s)", r, strings.Join(resource.Names(), ", "))
		}
	}
	if cfg.Runs <= 0 {
		cfg.Runs = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	scens, err := cfg.scenarios()
	if err != nil {
		return nil, nil, err
	}
	others, err := cfg.locks()
	if err != nil {
		return nil, nil, err
	}
	var (
		jobs    []job
		leftOut []string
	)
	for _, s := range scens {
		var whys []string            // why s is no lesson for some of the locks, in order
		not := map[string][]string{} // the locks, by why
		for _, lk := range cfg.Locks {
			other, ok := others[lk]
			kind := etcdKind
			if ok {
				kind = other.Kind
			}
			if why := s.NotFor(kind); why != "" {
				if not[why] == nil {
					whys = append(whys, why)
				}
				not[why] = append(not[why], lk)
				continue
			}
			for i := range cfg.Runs {
				j := job{s: s, lock: lk, factory: cfg.Factories[lk], seed: cfg.Seed + uint64(i)}
				if ok {
					j.other = &other
				}
				jobs = append(jobs, j)
			}
		}
		for _, why := range whys {
			leftOut = append(leftOut, fmt.Sprintf("%s, not run for %s", why, strings.Join(not[why], ", ")))
		}
	}
	if len(jobs) == 0 && len(leftOut) > 0 {
		// Only a lesson for another store was asked for.
		return nil, nil, fmt.Errorf("%w: %s", ErrNothingToRun, strings.Join(leftOut, "; "))
	}
	return jobs, leftOut, nil
}

// scenarios are the scenarios cfg names: its own (Extra) or the catalog's.
func (cfg *Config) scenarios() ([]Scenario, error) {
	var scens []Scenario
	for _, name := range cfg.Scenarios {
		i := slices.IndexFunc(cfg.Extra, func(s Scenario) bool { return s.Name == name })
		if i >= 0 {
			scens = append(scens, cfg.Extra[i])
			continue
		}
		s, err := Lookup(name)
		if err != nil {
			return nil, err
		}
		scens = append(scens, s)
	}
	return scens, nil
}

// locks fills in cfg.Factories and cfg.regressions — the built-in locks,
// the known-bad ones, which are expected to FAIL the scenario that catches
// them (see lock.Regression), the caller's own, and the locks run as
// processes cfg names — and returns the locks of other stores cfg names
// (see Backend).
func (cfg *Config) locks() (map[string]BackendLock, error) {
	factories := etcdlock.Builtin()
	cfg.regressions = map[string]lock.Regression{}
	cfg.weak = map[string][]string{}
	for _, l := range etcdlock.Locks() {
		for s := range l.Weak {
			cfg.weak[l.Name] = append(cfg.weak[l.Name], s)
		}
	}
	for _, r := range etcdlock.Regressions() {
		factories[r.Name] = r.Factory
		cfg.regressions[r.Name] = r.Regression
	}
	for _, b := range Backends() {
		for _, r := range b.Regressions() {
			cfg.regressions[r.Name] = r
		}
	}
	for name, f := range cfg.Factories {
		factories[name] = f
		delete(cfg.regressions, name) // the caller's lock, whatever its name
		delete(cfg.weak, name)
	}
	cfg.Factories = factories
	others := map[string]BackendLock{}
	for _, lk := range cfg.Locks {
		if _, ok := cfg.Factories[lk]; ok {
			continue
		}
		if f, ok := cfg.StoreFactories[lk]; ok {
			_, l, err := Adopt(cfg.Store, f)
			if err != nil {
				return nil, fmt.Errorf("lock %s: %w", lk, err)
			}
			others[lk] = l
			continue
		}
		if l, ok := backendLock(lk); ok {
			others[lk] = l
			continue
		}
		command, ok := strings.CutPrefix(lk, process.ExecPrefix)
		if !ok {
			return nil, fmt.Errorf("unknown lock %q", lk)
		}
		if cfg.Store != "" && cfg.Store != "etcd" {
			l, err := execLock(cfg.Store, command)
			if err != nil {
				return nil, err
			}
			others[lk] = l
			continue
		}
		f, err := etcdlock.Lookup(lk) // a lock run as a process
		if err != nil {
			return nil, err
		}
		cfg.Factories[lk] = f
	}
	return others, nil
}
