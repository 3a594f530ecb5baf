package scenarios

import (
	"context"
	"errors"
	"sync"

	"github.com/locklab/locklab/cluster"
)

// openClusters starts n embedded clusters at once (or connects to the
// external one, shared n times). If one fails, the others are closed.
func openClusters(ctx context.Context, cfg Config, n int) ([]*cluster.Cluster, error) {
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
func openCluster(ctx context.Context, cfg Config) (*cluster.Cluster, error) {
	if cfg.External != nil {
		x := *cfg.External
		x.Logger = cfg.Logger
		return cluster.Connect(ctx, x)
	}
	return cluster.Start(ctx, cluster.Config{Members: cfg.Members, Logger: cfg.Logger})
}
