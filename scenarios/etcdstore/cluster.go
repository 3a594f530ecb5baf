package etcdstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/scenarios"
)

// openClusters starts n embedded clusters at once (or connects to the
// external one, shared n times). If one fails, the others are closed.
func openClusters(ctx context.Context, cfg scenarios.Config, n int) ([]*cluster.Cluster, error) {
	if cfg.External != nil {
		c, err := openCluster(ctx, cfg)
		if err != nil {
			return nil, err
		}
		out := make([]*cluster.Cluster, n)
		for i := range out {
			out[i] = c
		}
		return out, nil
	}
	out := make([]*cluster.Cluster, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() { out[i], errs[i] = openCluster(ctx, cfg) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, c := range out {
			if c != nil {
				c.Close()
			}
		}
		return nil, err
	}
	return out, nil
}

// openCluster starts one embedded cluster for a run, or connects to the
// external one.
func openCluster(ctx context.Context, cfg scenarios.Config) (*cluster.Cluster, error) {
	if cfg.External != nil {
		x := *cfg.External
		x.Logger = cfg.Logger
		return cluster.Connect(ctx, x)
	}
	return cluster.Start(ctx, cluster.Config{Members: cfg.Members, Logger: cfg.Logger})
}

// restore brings an embedded cluster back to health between runs: faults
// undone by the run, every member up and answering linearizable reads.
func restore(ctx context.Context, c *cluster.Cluster) error {
	if c.IsExternal() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var errs []error
	errs = append(errs, c.Heal())
	for _, m := range c.Members() {
		if !c.Running(m) {
			errs = append(errs, c.Restart(ctx, m))
		}
	}
	for _, m := range c.Members() {
		errs = append(errs, c.WaitLinearizableRead(ctx, m))
	}
	return errors.Join(errs...)
}
