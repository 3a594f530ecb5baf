package live

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/run/etcdrun"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/scenarios/etcdstore"
	"github.com/locklab/locklab/script"
)

// Engine is one run the lab drives, on any store: what the page's
// commands act on, the histories it shows, and its close, which also
// undoes its faults and ends what it started.
type Engine interface {
	script.Target
	// Events are the i-th resource's history so far.
	Events(i int) []history.Event
	// Resources names the resources, in the histories' order.
	Resources() []string
	Close() error
}

// Store is where a lab's runs are: the locks the page offers, the kind of
// store they are on (which lessons are for them), the members a script
// names, and a new run of one of them.
type Store interface {
	Locks() []string
	Kind() scenarios.StoreKind
	Members() int
	Open(ctx context.Context, lock, runID string, ttl int) (Engine, error)
}

// EtcdStore is a Store of etcd locks (by name) on c, every run sharing it
// under a key prefix of its own.
func EtcdStore(c *cluster.Cluster, locks map[string]etcdlock.Factory) Store {
	return etcdStore{c, locks}
}

type etcdStore struct {
	c     *cluster.Cluster
	locks map[string]etcdlock.Factory
}

func (s etcdStore) Locks() []string           { return Names(s.locks) }
func (s etcdStore) Kind() scenarios.StoreKind { return etcdstore.Kind() }
func (s etcdStore) Members() int              { return len(s.c.Members()) }

func (s etcdStore) Open(_ context.Context, name, runID string, ttl int) (Engine, error) {
	f, ok := s.locks[name]
	if !ok {
		return nil, unknownLock(s, name)
	}
	env, err := etcdrun.New(etcdrun.Config{Cluster: s.c, Factory: f, TTL: ttl, RunID: runID})
	if err != nil {
		return nil, err
	}
	return env, nil
}

// unknownLock is the error of a lock s does not offer.
func unknownLock(s Store, name string) error {
	return fmt.Errorf("unknown lock %q (locks: %s)", name, joinNames(s.Locks()))
}

// BackendStore is a Store of the locks called names of a store registered
// with package scenarios (Redis: import scenarios/redisstore), all of one
// kind, of members servers: every run on servers started for it, which
// its Close ends — a failover does not outlive its run.
func BackendStore(names []string, kind scenarios.StoreKind, members int) Store {
	return backendStore{names: slices.Sorted(slices.Values(names)), kind: kind, members: members}
}

type backendStore struct {
	names   []string
	kind    scenarios.StoreKind
	members int
}

func (s backendStore) Locks() []string           { return s.names }
func (s backendStore) Kind() scenarios.StoreKind { return s.kind }
func (s backendStore) Members() int              { return s.members }

func (s backendStore) Open(ctx context.Context, name, runID string, ttl int) (Engine, error) {
	if !slices.Contains(s.names, name) {
		return nil, unknownLock(s, name)
	}
	eng, resources, closeAll, err := scenarios.OpenLock(ctx, name, ttl, runID)
	if err != nil {
		return nil, err
	}
	return &backendEngine{Engine: eng, resources: resources, close: closeAll}, nil
}

// backendEngine is a store's run, with its resources and a close that
// ends its servers too.
type backendEngine struct {
	scenarios.Engine
	resources []string
	close     func() error
}

func (e *backendEngine) Resources() []string { return e.resources }

// Unwrap is the store's own run: what it can do beside script.Target (a
// failover) the lab's page can ask of it.
func (e *backendEngine) Unwrap() script.Target { return e.Engine }
func (e *backendEngine) Close() error          { return e.close() }

// storeName is the State's name of kind's store.
func storeName(k scenarios.StoreKind) string { return k.Name }

// labRunID names a lab's n-th run.
func labRunID(n int) string { return fmt.Sprintf("lab-%d-%d", time.Now().UnixNano(), n) }
