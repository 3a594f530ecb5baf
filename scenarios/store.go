package scenarios

import (
	"context"
	"errors"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/run"
)

// etcdStore runs a configuration on an etcd cluster.
type etcdStore struct {
	c       *cluster.Cluster
	factory lock.Factory
}

func (st etcdStore) Skip(s Scenario) string {
	if s.MemberFaults && st.c.IsExternal() {
		return "needs member faults, not available on an external cluster"
	}
	return ""
}

func (st etcdStore) Members() int { return len(st.c.Members()) }

func (st etcdStore) Resources(asked []string) ([]string, map[string]string) { return asked, nil }

func (st etcdStore) Open(ctx context.Context, cfg EngineConfig) (Engine, func() error, error) {
	env, err := run.New(run.Config{Cluster: st.c, Factory: st.factory, TTL: cfg.TTL, Minimum: cfg.Minimum,
		OpTimeout: cfg.OpTimeout, RunID: cfg.RunID, Sinks: cfg.Sinks, Resource: cfg.Resources})
	if err != nil {
		return nil, nil, err
	}
	return env, func() error { return errors.Join(env.Close(), restore(context.WithoutCancel(ctx), st.c)) }, nil
}
