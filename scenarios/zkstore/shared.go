package zkstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/scenarios"
)

// Share is the ensemble the configurations of one run share (see
// scenarios.Sharing): three JVMs started once, when the first
// configuration asks, instead of for every configuration — a JVM takes a
// second or more to start, and most ZooKeeper lessons fault no server.
func (backend) Share() scenarios.Servers { return &shared{} }

// shared is one run's ensemble, started on first use; each configuration
// keeps its nodes under a path of its own there (runID).
type shared struct {
	mu     sync.Mutex
	ens    *zkd.Ensemble
	closed bool
	runs   atomic.Int64
}

// get returns the ensemble, started if it is not yet. A start that fails
// is tried again by the next configuration that asks.
func (s *shared) get(ctx context.Context) (*zkd.Ensemble, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, fmt.Errorf("zkstore: the run's ensemble is closed")
	case s.ens == nil:
		ens, err := zkd.Start(ctx, members, zkd.Options{})
		if err != nil {
			return nil, err
		}
		s.ens = ens
	}
	return s.ens, nil
}

// runID is id made unique on the ensemble: a configuration run again (an
// attempt after the environment's ERROR) must not meet the nodes its first
// attempt's sessions may still hold there.
func (s *shared) runID(id string) string { return fmt.Sprintf("%s-%d", id, s.runs.Add(1)) }

// Close ends the ensemble, if it was started.
func (s *shared) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.ens == nil {
		return nil
	}
	return s.ens.Close()
}
