package scenarios

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/locklab/locklab/lock"
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
	locks, err := cfg.locks()
	if err != nil {
		return nil, nil, err
	}
	var jobs []job
	leftOut := cfg.resourcesLeftOut(locks)
	cfg.lessonsLeftOut = nil
	for _, s := range scens {
		var whys []string            // why s is no lesson for some of the locks, in order
		not := map[string][]string{} // the locks, by why
		for _, lk := range cfg.Locks {
			res := cfg.keptHere(locks[lk].Kind)
			if len(res) == 0 {
				continue
			}
			if why := s.NotFor(locks[lk].Kind); why != "" {
				if not[why] == nil {
					whys = append(whys, why)
				}
				not[why] = append(not[why], lk)
				continue
			}
			for i := range cfg.Runs {
				jobs = append(jobs, job{s: s, lock: lk, l: locks[lk], seed: cfg.Seed + uint64(i), resources: res})
			}
		}
		for _, why := range whys {
			l := LessonLeftOut{Lesson: s.Name, Why: why, Locks: not[why]}
			cfg.lessonsLeftOut = append(cfg.lessonsLeftOut, l)
			leftOut = append(leftOut, l.Line())
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

// locks are the locks cfg names, each as its store runs it — a registered
// store's lock (a built-in or a known-bad one), the caller's own Go lock
// (Factories, StoreFactories: adopted by its store, whatever its name),
// or a lock run as a process on cfg.Store — and fills in cfg.regressions,
// the known-bad locks, which are expected to FAIL the scenario that
// catches them (see lock.Regression).
func (cfg *Config) locks() (map[string]BackendLock, error) {
	cfg.regressions = map[string]lock.Regression{}
	for _, b := range Backends() {
		for _, r := range b.Regressions() {
			cfg.regressions[r.Name] = r
		}
	}
	if len(Backends()) == 0 {
		return nil, errors.New("no store is linked into this program" + importHint)
	}
	out := map[string]BackendLock{}
	for _, lk := range cfg.Locks {
		l, err := cfg.lock(lk)
		if err != nil {
			return nil, err
		}
		out[lk] = l
	}
	return out, nil
}

// lock is the lock cfg names lk, as its store runs it (see locks).
func (cfg *Config) lock(lk string) (BackendLock, error) {
	var (
		own  any
		mine bool
	)
	if f, ok := cfg.Factories[lk]; ok {
		own, mine = f, true
	} else if f, ok := cfg.StoreFactories[lk]; ok {
		own, mine = f, true
	}
	if mine {
		delete(cfg.regressions, lk) // the caller's lock, whatever its name
		store := cfg.Store
		if _, etcd := cfg.Factories[lk]; etcd {
			store = ""
		}
		_, l, err := Adopt(store, own)
		if err != nil {
			return BackendLock{}, fmt.Errorf("lock %s: %w", lk, err)
		}
		return l, nil
	}
	if l, ok := backendLock(lk); ok {
		return l, nil
	}
	command, ok := strings.CutPrefix(lk, process.ExecPrefix)
	if !ok {
		var names []string
		for _, b := range Backends() {
			names = append(names, b.Names()...)
		}
		return BackendLock{}, fmt.Errorf("%w %q (locks: %s)", lock.ErrUnknownLock, lk, strings.Join(names, ", "))
	}
	return execLock(cfg.Store, command)
}

// keptHere are the resources of the run's that a lock on the store of
// kind can protect: the lab's own, and those this store keeps — never a
// resource another store keeps (its counter lives there, guarded by keys a
// lock on this store does not write).
func (cfg *Config) keptHere(kind StoreKind) []string {
	return slices.DeleteFunc(slices.Clone(cfg.Resources), func(r string) bool {
		k, ok := resource.KeptBy(r)
		return ok && k.Store != kind.Name
	})
}

// resourcesLeftOut are the lines that say, for each store of the locks,
// the resources asked for that another store keeps, with the locks they
// are not run for — said only when the run names its resources (the whole
// list is every store's, and each store runs its own).
func (cfg *Config) resourcesLeftOut(locks map[string]BackendLock) []string {
	if slices.Equal(cfg.Resources, resource.Names()) {
		return nil
	}
	var kinds []StoreKind
	of := map[string][]string{} // a store's locks, by its name
	for _, lk := range cfg.Locks {
		kind := locks[lk].Kind
		if of[kind.Name] == nil {
			kinds = append(kinds, kind)
		}
		of[kind.Name] = append(of[kind.Name], lk)
	}
	var leftOut []string
	for _, kind := range kinds {
		for _, r := range cfg.Resources {
			if k, ok := resource.KeptBy(r); ok && k.Store != kind.Name {
				leftOut = append(leftOut, fmt.Sprintf("%s, not run for %s", KeptElsewhere(r, kind.Label),
					strings.Join(of[kind.Name], ", ")))
			}
		}
	}
	return leftOut
}
