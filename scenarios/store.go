package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/redislock"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/run/redisrun"
	"github.com/locklab/locklab/script"
)

// engine is one run, on either store: what a scenario executes on, and
// what the runner reads back from it.
type engine interface {
	script.Target
	Err() error
	Reports() ([]models.Report, error)
	Events(i int) []history.Event
}

// engineConfig is what a run is made with, whatever the store.
type engineConfig struct {
	TTL       int
	Minimum   *history.Minimum
	OpTimeout time.Duration
	Sinks     []history.Sink
	Resources []string
	RunID     string
}

// store is where a configuration runs: the etcd cluster, or Redis.
type store interface {
	// skip says why s does not run on this store ("" when it does).
	skip(s Scenario) string
	members() int
	// resources splits the asked-for resources into those the store's
	// runs protect and, by resource, why the others are skipped.
	resources(asked []string) (ran []string, skipped map[string]string)
	// open starts a run; closing it also restores the store for the next.
	open(ctx context.Context, cfg engineConfig) (engine, func() error, error)
}

// inapplicable says why scenario s is not a lesson for a lock of its kind
// (an etcd lock, a Redis lock on one primary, or one over masters
// independent masters), "" when it is: such a pair is not run at all.
func inapplicable(s Scenario, redis bool, masters int) string {
	switch {
	case !redis && (s.Stores == RedisOnly || s.Stores == RedlockOnly):
		return "is a Redis lesson"
	case redis && s.Stores == EtcdOnly:
		return "is an etcd lesson (its faults or its workload are etcd's)"
	case redis && masters > 0 && s.Stores != RedlockOnly:
		return "is a lesson of one Redis primary (Redlock gives no token and runs on independent masters)"
	case redis && masters == 0 && s.Stores == RedlockOnly:
		return "is a Redlock lesson"
	}
	return ""
}

// etcdStore runs a configuration on an etcd cluster.
type etcdStore struct {
	c       *cluster.Cluster
	factory lock.Factory
}

func (st etcdStore) skip(s Scenario) string {
	if s.MemberFaults && st.c.IsExternal() {
		return "needs member faults, not available on an external cluster"
	}
	return ""
}

func (st etcdStore) members() int { return len(st.c.Members()) }

func (st etcdStore) resources(asked []string) ([]string, map[string]string) { return asked, nil }

func (st etcdStore) open(ctx context.Context, cfg engineConfig) (engine, func() error, error) {
	env, err := run.New(run.Config{Cluster: st.c, Factory: st.factory, TTL: cfg.TTL, Minimum: cfg.Minimum,
		OpTimeout: cfg.OpTimeout, RunID: cfg.RunID, Sinks: cfg.Sinks, Resource: cfg.Resources})
	if err != nil {
		return nil, nil, err
	}
	return env, func() error { return errors.Join(env.Close(), restore(context.WithoutCancel(ctx), st.c)) }, nil
}

// redisStore runs a configuration on Redis started for it: a primary and
// two replicas, or five independent masters for a lock that takes them.
type redisStore struct {
	factory redislock.Factory
	masters int
	// own, if set, is the user's Redis, shared by every run.
	own *redisd.Set
}

// redisMembers is the size of the Redis a run starts: a primary and two
// replicas, as the etcd scenarios' three members.
const redisMembers = 3

func (st redisStore) skip(s Scenario) string {
	if st.own != nil {
		switch n := len(st.own.Names()); {
		case s.MemberFaults:
			return "needs faults of the Redis servers, not available on a Redis of your own"
		case st.masters > 0 && n < 3:
			return fmt.Sprintf("Redlock needs independent masters: --redis gave %d address(es)", n)
		case st.masters == 0 && n != 1:
			return fmt.Sprintf("a lock on one primary needs one address: --redis gave %d", n)
		}
		return ""
	}
	if _, err := redisd.Find(); err != nil {
		return fmt.Sprintf("%v: the Redis locks were not run", err)
	}
	return ""
}

func (st redisStore) members() int {
	if st.own != nil {
		return max(len(st.own.Names()), redisMembers) // a script's member names where clients say they are
	}
	return max(st.masters, redisMembers)
}

func (st redisStore) resources(asked []string) ([]string, map[string]string) {
	var ran []string
	skipped := map[string]string{}
	for _, r := range asked {
		switch {
		case !slices.Contains(redisrun.Resources(), r):
			skipped[r] = r + " guards a write with the lock's key in etcd: a Redis lock keeps none there"
		case r == "fenced" && st.masters > 0:
			skipped[r] = "Redlock gives no fencing token, so a fenced store refuses every write of its holders: " +
				"the store cannot fence what it is not given"
		default:
			ran = append(ran, r)
		}
	}
	return ran, skipped
}

func (st redisStore) open(ctx context.Context, cfg engineConfig) (engine, func() error, error) {
	var (
		set *redisd.Set
		err error
	)
	switch {
	case st.own != nil:
		set = st.own
	case st.masters > 0:
		set, err = redisd.StartIndependent(ctx, st.masters, redisd.Options{})
	default:
		set, err = redisd.StartReplicated(ctx, redisMembers-1, redisd.Options{})
	}
	if err != nil {
		return nil, nil, err
	}
	closeSet := set.Close
	if st.own != nil {
		closeSet = func() error { return nil } // the user's, shared: closed once, by Run
	}
	env, err := redisrun.New(redisrun.Config{Set: set, Masters: st.masters > 0, Factory: st.factory, TTL: cfg.TTL,
		RunID: cfg.RunID, Sinks: cfg.Sinks, Resource: cfg.Resources, Minimum: cfg.Minimum, OpTimeout: cfg.OpTimeout})
	if err != nil {
		closeSet()
		return nil, nil, err
	}
	return env, func() error { return errors.Join(env.Close(), closeSet()) }, nil
}
