package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/registry"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/script"
)

// A Backend is a store whose locks a run can name: it says which locks
// are its, what its runs can do, and runs their configurations on servers
// of its own. Each store's is a package of its own that registers itself
// when a program imports it — scenarios/etcdstore (the default store),
// scenarios/redisstore, scenarios/zkstore — so that a program of one
// store's locks (a team's locktest gate) links no other store's client.
type Backend interface {
	// Name is the store's name, as Config.Store names it.
	Name() string
	// Names are the locks it has by name, the known-bad ones too.
	Names() []string
	// About says what its locks run on ("real Redis") and what that
	// needs on the machine ("redis-server"); "" for a backend whose locks
	// another lists (Names is then empty too).
	About() (on, needs string)
	// Locks describes the locks it has by name, the known-bad ones too.
	Locks() []lock.Description
	// Lock returns the backend's lock called name; false if it has none.
	Lock(name string) (BackendLock, bool)
	// Exec returns the lock run as a process by command on this store
	// (see process.ExecPrefix).
	Exec(command string) (BackendLock, error)
	// Adopt returns the user's Go lock made by factory as a lock of this
	// store, documented to fail nothing; an error if factory is no
	// lock.Factory of the store's client.
	Adopt(factory any) (BackendLock, error)
	// Regressions are the backend's known-bad locks (see lock.Regression).
	Regressions() []lock.Regression
	// Kind is what its locks run on and what its runs can do: the lessons
	// for them follow (see Scenario.NotFor).
	Kind() StoreKind
}

// A Connecting backend runs its locks on servers of the user's own too,
// as cfg names them (Config.External for etcd, Config.Redis for Redis):
// Own reaches them, shared by every configuration of the backend's locks
// until it is closed; nil and no error when cfg names none.
type Connecting interface {
	Own(ctx context.Context, cfg Config) (Servers, error)
}

// A Pooling backend runs each worker's configurations on servers of the
// worker's own, started once for the run and restored between its
// configurations (etcd's embedded clusters), or all on the user's: Pool
// returns them for n workers, started only when a run has the backend's
// locks; the run closes each once.
type Pooling interface {
	Pool(ctx context.Context, cfg Config, n int) ([]Servers, error)
}

// Servers are a backend's servers of the user's own, connected once for a
// run (see Backend.Connect), or servers a Sharing backend starts for one.
type Servers interface {
	Close() error
}

// A Sharing backend shares its servers between the configurations of one
// run whose scenario faults no member (EngineConfig.FaultsMembers): Share
// returns them, started when a configuration first asks (nothing is
// started for a run without its locks), and the run closes them when it
// ends. Its locks' Store is then given them as own; each configuration
// keeps under keys of its own there, as on servers of the user's.
type Sharing interface {
	Share() Servers
}

// share is every registered Sharing backend's servers for one run, by the
// backend's name.
func share() map[string]Servers {
	out := map[string]Servers{}
	for _, b := range Backends() {
		if s, ok := b.(Sharing); ok {
			out[b.Name()] = s.Share()
		}
	}
	return out
}

// BackendLock is one lock of a Backend.
type BackendLock struct {
	// Kind is its store's: which lessons are for it (see Scenario.NotFor),
	// and whose servers a run shares (Sharing, by Kind.Name).
	Kind StoreKind
	// Weak are the lessons it is documented to fail (a FAIL expected).
	Weak []string
	// Store is where one configuration of it runs: on own (the worker's,
	// the run's shared or the user's servers: see Pooling, Sharing,
	// Connecting), or, when own is nil, on servers started for it; shape is
	// what its grants carry, as its preflight learnt.
	Store func(own Servers, shape GrantShape) Store
	// Preflight, if set, has one Locker of it acquire and release once on
	// servers of its own (or on own, if not nil: a worker's or the user's,
	// under keys of its own) with nothing else going on, and says what its
	// grant carried. A lock that cannot acquire alone (a program that is
	// missing or crashes, an adapter that answers nothing), or whose
	// release never returns, would fill a whole run with the same error:
	// its error says so at once instead, with what the lock said.
	Preflight func(ctx context.Context, own Servers) (GrantShape, error)
}

// A Store is where one configuration runs: etcd's cluster, or a backend's
// servers.
type Store interface {
	// Skip says why s does not run on this store ("" when it does).
	Skip(s Scenario) string
	// Members is how many members (servers) a script may name.
	Members() int
	// Resources splits the asked-for resources into those the store's
	// runs protect and, by resource, why the others are skipped.
	Resources(asked []string) (ran []string, skipped map[string]string)
	// Open starts a run; closing it also restores the store for the next.
	Open(ctx context.Context, cfg EngineConfig) (Engine, func() error, error)
}

// Engine is one run, on any store: what a scenario executes on, and what
// the runner reads back from it.
type Engine interface {
	script.Target
	// Err is the first error of the run's own (a fault that failed, a
	// recording lost), nil if none.
	Err() error
	// Events are the i-th resource's history so far.
	Events(i int) []history.Event
}

// EngineConfig is what a run is made with, whatever the store.
type EngineConfig struct {
	TTL       int
	Minimum   *history.Minimum
	OpTimeout time.Duration
	Sinks     []history.Sink
	Resources []string
	RunID     string
	// FaultsMembers: the scenario kills, isolates or fails over the
	// store's members, so its servers are its own, never shared.
	FaultsMembers bool
	// ClientShim, if set, is the clock shim to preload into every lock run
	// as a program, each client on a clock of its own (ClientClocks).
	ClientShim string
}

// ClientClocks is an Engine that can run each lock run as a program on
// its client's own wall clock, which a script's `jump-clock cN` moves:
// every store's, through run/engine.
type ClientClocks interface {
	MoveClientClocks(shim string)
}

// backends are the registered backends.
var backends registry.List[Backend]

// Register adds a backend whose locks runs can name from then on. A
// backend package calls it from its init function.
func Register(b Backend) { backends.Add(b) }

// RegisterDefault registers b as the default store: first of Backends and
// Kinds, the store of a lock run as a process when Config.Store is "".
func RegisterDefault(b Backend) { backends.AddFirst(b) }

// Backends are the registered backends, the default store's first, then
// in the order registered.
func Backends() []Backend { return backends.All() }

// PreflightTimeout bounds each of a preflight's acquire and release: a
// process lock's start-up (process.StartupAllowance) and a few seconds more
// on servers nobody else uses.
const PreflightTimeout = process.StartupAllowance + 5*time.Second

// backendLock is the registered lock called name, false if none is.
func backendLock(name string) (BackendLock, bool) { return LookupBackendLock(name) }

// LookupBackendLock is the lock called name of a registered backend;
// false if no backend has it.
func LookupBackendLock(name string) (BackendLock, bool) {
	for _, b := range Backends() {
		if l, ok := b.Lock(name); ok {
			return l, true
		}
	}
	return BackendLock{}, false
}

// ExecLock is the lock run as a process by command on the registered
// store called store ("": the default store).
func ExecLock(store, command string) (BackendLock, error) { return execLock(store, command) }

// execLock is ExecLock.
func execLock(store, command string) (BackendLock, error) {
	if store == "" {
		store = DefaultKind().Name
	}
	for _, b := range Backends() {
		if b.Name() == store {
			return b.Exec(command)
		}
	}
	return BackendLock{}, fmt.Errorf("unknown store %q (stores: %s)", store, storeNames())
}

// Adopt returns a user's Go lock made by factory (a lock.Factory of the
// store's client) as a lock of the registered store called store, or of
// the first registered store that takes it when store is "", and the
// store's name.
func Adopt(store string, factory any) (string, BackendLock, error) {
	var why []string
	for _, b := range Backends() {
		if store != "" && b.Name() != store {
			continue
		}
		l, err := b.Adopt(factory)
		if err == nil {
			return b.Name(), l, nil
		}
		why = append(why, err.Error())
	}
	switch {
	case len(why) > 0:
		return "", BackendLock{}, errors.New(strings.Join(why, "; "))
	case store != "":
		return "", BackendLock{}, fmt.Errorf("unknown store %q (stores: %s)%s", store, storeNames(), importHint)
	}
	return "", BackendLock{}, fmt.Errorf("no store linked into this program takes a %T%s", factory, importHint)
}

// importHint says how a program links a store.
const importHint = `: a program links a store by importing its package, as ` +
	`import _ "github.com/locklab/locklab/scenarios/redisstore" does Redis's`

// PreflightOn has the lock called name — a registered store's, or one run
// as a process on cfg.Store — acquire and release once, alone on servers
// of its own, or on the user's that cfg names (see BackendLock.Preflight).
func PreflightOn(ctx context.Context, cfg Config, name string) error {
	l, ok := backendLock(name)
	if command, exec := strings.CutPrefix(name, process.ExecPrefix); exec {
		var err error
		if l, err = execLock(cfg.Store, command); err != nil {
			return err
		}
	} else if !ok {
		return fmt.Errorf("unknown lock %q", name)
	}
	_, err := PreflightLock(ctx, cfg, l)
	return err
}

// PreflightLock has l acquire and release once, alone on servers of its
// own, or on the user's that cfg names (see BackendLock.Preflight), and
// says what its grant carried; a lock without a preflight is taken to
// carry both.
func PreflightLock(ctx context.Context, cfg Config, l BackendLock) (GrantShape, error) {
	if l.Preflight == nil {
		return GrantShape{Token: true, Key: true}, nil
	}
	servers, err := ownServers(ctx, cfg, l.Kind.Name)
	if err != nil {
		return GrantShape{}, err
	}
	if servers != nil {
		defer servers.Close()
	}
	return l.Preflight(ctx, servers)
}

// ownServers are the user's servers cfg names for the store called
// store, connected; nil if it names none.
func ownServers(ctx context.Context, cfg Config, store string) (Servers, error) {
	for _, b := range Backends() {
		if c, ok := b.(Connecting); ok && b.Name() == store {
			return c.Own(ctx, cfg)
		}
	}
	return nil, nil
}

// OpenLock starts one run of the registered backend lock called name on
// servers started for it, with leases of ttl seconds (the live lab's runs
// on another store): its engine, the resources it protects, and what
// closes both.
func OpenLock(ctx context.Context, name string, ttl int, runID string) (Engine, []string, func() error, error) {
	l, ok := backendLock(name)
	if !ok {
		return nil, nil, nil, fmt.Errorf("unknown lock %q", name)
	}
	st := l.Store(nil, GrantShape{Token: true, Key: true})
	ran, _ := st.Resources(resource.Names())
	eng, closeAll, err := st.Open(ctx, EngineConfig{TTL: ttl, OpTimeout: run.OpTimeoutFor(ttl), Resources: ran, RunID: runID})
	if err != nil {
		return nil, nil, nil, err
	}
	return eng, ran, closeAll, nil
}

// KindOf is the store kind of the registered backend lock called name;
// false if no backend has it.
func KindOf(name string) (StoreKind, bool) {
	l, ok := backendLock(name)
	return l.Kind, ok
}

// A Case is one run of a lock of another store on servers its store
// started for it alone: closing it closes them.
type Case interface {
	Engine
	Close() error
}

// OpenCase opens one run of l on servers its store starts for it,
// protecting resources (an exploration's case).
func (l BackendLock) OpenCase(ctx context.Context, runID string, ttl int, resources []string) (Case, error) {
	return l.OpenCaseOn(ctx, nil, runID, ttl, resources)
}

// OpenCaseOn opens one run of l on own (see CaseServers; nil: servers its
// store starts for it alone), protecting resources: closing it restores
// own for the next case.
func (l BackendLock) OpenCaseOn(ctx context.Context, own Servers, runID string, ttl int, resources []string) (Case, error) {
	eng, closeAll, err := l.Store(own, GrantShape{Token: true, Key: true}).Open(ctx, EngineConfig{TTL: ttl,
		OpTimeout: run.OpTimeoutFor(ttl), Resources: resources, RunID: runID})
	if err != nil {
		return nil, err
	}
	return storeCase{eng, closeAll}, nil
}

// CaseServers are the servers the cases of an exploration of a lock of
// the store called store run on, one case after another: one worker's of
// a Pooling store, the user's that cfg names, or those a Sharing store
// shares; nil when each case starts servers of its own. Closing them is
// the caller's.
func CaseServers(ctx context.Context, cfg Config, store string) (Servers, error) {
	for _, b := range Backends() {
		if b.Name() != store {
			continue
		}
		if p, ok := b.(Pooling); ok {
			pool, err := p.Pool(ctx, cfg, 1)
			if err != nil {
				return nil, err
			}
			return pool[0], nil
		}
		if own, err := ownServers(ctx, cfg, store); own != nil || err != nil {
			return own, err
		}
		if sh, ok := b.(Sharing); ok {
			return sh.Share(), nil
		}
	}
	return nil, nil
}

// storeCase is one run on a store's servers, closed with them.
type storeCase struct {
	Engine
	closeAll func() error
}

func (c storeCase) Close() error { return c.closeAll() }
