package main

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/redislock"
	"github.com/locklab/locklab/lock/resource"
	labrun "github.com/locklab/locklab/run"
	"github.com/locklab/locklab/run/redisrun"
	"github.com/locklab/locklab/scenarios"
)

// redisMembers is how many servers an exploration of a Redis lock runs
// on: a primary and two replicas, as the Redis lessons (a member name for
// each of three clients).
const redisMembers = 3

// exploreLock is the lock an exploration draws scripts for: an etcd
// lock's factory, or a Redis lock's and how many independent masters it
// takes (0: one primary with replicas).
type exploreLock struct {
	etcd    etcdlock.Factory
	redis   redislock.Factory
	masters int
	// other is a lock of another store (ZooKeeper's): each case runs on
	// servers its store starts for it.
	other *scenarios.BackendLock
}

// resources are the resources the lock's runs can protect.
func (l exploreLock) resources() []string {
	if l.other != nil {
		ran, _ := l.other.Store(nil, scenarios.GrantShape{Token: true, Key: true}).Resources(resource.Names())
		return ran
	}
	switch {
	case l.redis == nil:
		return resource.Names()
	case l.masters > 0:
		return []string{"unfenced"} // Redlock gives no token for a fenced store
	}
	return redisrun.Resources()
}

// startRedis starts the Redis every case of a Redis lock runs on, each
// under keys of its own: a primary with replicas, or the lock's masters.
func (l exploreLock) startRedis(ctx context.Context) (*redisd.Set, error) {
	var (
		set *redisd.Set
		err error
	)
	if l.masters > 0 {
		set, err = redisd.StartIndependent(ctx, l.masters, redisd.Options{})
	} else {
		set, err = redisd.StartReplicated(ctx, redisMembers-1, redisd.Options{})
	}
	if err != nil {
		return nil, fmt.Errorf("explore: the lab's Redis: %w", err)
	}
	return set, nil
}

// opener starts one case's run of the Redis lock on set, on every
// resource it can protect (as an etcd case runs on all three): the script
// it leaves runs again as written.
func (l exploreLock) opener(set *redisd.Set) func(context.Context, string, int) (explore.Engine, error) {
	return func(_ context.Context, runID string, ttl int) (explore.Engine, error) {
		env, err := redisrun.New(redisrun.Config{Set: set, Masters: l.masters > 0, Factory: l.redis, TTL: ttl, RunID: runID,
			Resource: l.resources(), OpTimeout: labrun.OpTimeoutFor(ttl)})
		if err != nil {
			return nil, err
		}
		return env, nil
	}
}

// otherOpener opens each case of a lock of another store on servers its
// store starts for the case.
func (l exploreLock) otherOpener(resources []string) func(context.Context, string, int) (explore.Engine, error) {
	return func(ctx context.Context, runID string, ttl int) (explore.Engine, error) {
		return l.other.OpenCase(ctx, runID, ttl, resources)
	}
}
