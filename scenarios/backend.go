package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/script"
)

// A Backend is a store beside etcd whose locks a run can name: it says
// which locks are its and runs their configurations on servers of its own.
// Package scenarios/redisstore is Redis's and registers itself when a
// program imports it, so that a program of etcd locks alone (a team's
// locktest gate) links no Redis client.
type Backend interface {
	// Name is the store's name, as Config.Store names it ("redis").
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

// A Connecting backend runs its locks on servers of the user's own too
// (Config.Redis): Connect reaches them, shared by every configuration of
// the backend's locks until it is closed.
type Connecting interface {
	Connect(ctx context.Context, addrs []string) (Servers, error)
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
	// Store is where one configuration of it runs: on servers started for
	// the run, or on own (nil unless Config.Redis named servers).
	Store func(own Servers) Store
	// Preflight, if set, has one Locker of it acquire and release once on
	// servers of its own (or on own, if not nil: the user's, under keys of
	// its own) with nothing else going on (see Preflight), and says
	// whether its grant carried a fencing token: a lock run as a process
	// has one.
	Preflight func(ctx context.Context, own Servers) (token bool, err error)
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
}

var (
	backendsMu sync.Mutex
	backends   []Backend
)

// Register adds a backend whose locks runs can name from then on. A
// backend package calls it from its init function.
func Register(b Backend) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	backends = append(backends, b)
}

// Backends are the registered backends, in the order registered.
func Backends() []Backend {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	return slices.Clone(backends)
}

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

// execLock is the lock run as a process by command on the registered
// store called store.
func execLock(store, command string) (BackendLock, error) {
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
// store's name. A factory of etcd's client is no other store's: its runs
// need none of this (Config.Factories).
func Adopt(store string, factory any) (string, BackendLock, error) {
	var names, why []string
	for _, b := range Backends() {
		names = append(names, b.Name())
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
		return "", BackendLock{}, fmt.Errorf("unknown store %q (stores: %s)%s", store, storeNames(), importHint(names))
	}
	return "", BackendLock{}, fmt.Errorf("no store linked into this program takes a %T (etcd's takes an etcdlock.Factory)%s",
		factory, importHint(names))
}

// importHint says how to link Redis's store when no backend is.
func importHint(linked []string) string {
	if len(linked) > 0 {
		return ""
	}
	return `: import _ "github.com/locklab/locklab/scenarios/redisstore" to run Redis locks`
}

// PreflightOn is Preflight for the lock run as a process by command on
// the registered store called store: on servers started for it, or on
// the user's at own (Config.Redis).
func PreflightOn(ctx context.Context, store, command string, own []string) error {
	l, err := execLock(store, command)
	if err != nil || l.Preflight == nil {
		return err
	}
	var servers Servers
	if len(own) > 0 {
		if servers, err = connectOwn(ctx, own); err != nil {
			return err
		}
		defer servers.Close()
	}
	_, err = l.Preflight(ctx, servers)
	return err
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
	st := l.Store(nil)
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

// connectOwn connects the first registered backend that takes servers of
// the user's own (Connecting: Redis's) to addrs.
func connectOwn(ctx context.Context, addrs []string) (Servers, error) {
	for _, b := range Backends() {
		if c, ok := b.(Connecting); ok {
			return c.Connect(ctx, addrs)
		}
	}
	return nil, errors.New("no store linked into this program runs on servers of your own: import " +
		"github.com/locklab/locklab/scenarios/redisstore to run the Redis locks")
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
	eng, closeAll, err := l.Store(nil).Open(ctx, EngineConfig{TTL: ttl, OpTimeout: run.OpTimeoutFor(ttl),
		Resources: resources, RunID: runID})
	if err != nil {
		return nil, err
	}
	return storeCase{eng, closeAll}, nil
}

// storeCase is one run on a store's servers, closed with them.
type storeCase struct {
	Engine
	closeAll func() error
}

func (c storeCase) Close() error { return c.closeAll() }
