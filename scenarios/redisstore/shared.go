package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/internal/clockshim"
	"github.com/locklab/locklab/scenarios"
)

// Share is the Redis the configurations of one run (or one exploration's
// cases) share when they fault no server (see scenarios.Sharing): a
// primary with two replicas, or Redlock's masters, started once, when the
// first configuration asks; each keeps its keys under a prefix of its own
// there, as on a Redis of the user's.
func (b backend) Share() scenarios.Servers { return &shared{masters: b.masters} }

// shared is one run's Redis, started on first use.
type shared struct {
	masters int
	mu      sync.Mutex
	set     *redisd.Set
	closed  bool
	runs    atomic.Int64
}

// get returns the servers, started if they are not yet. A start that
// fails is tried again by the next configuration that asks.
func (s *shared) get(ctx context.Context) (*redisd.Set, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("redisstore: the run's Redis is closed")
	}
	if s.set == nil {
		set, err := start(ctx, s.masters, false)
		if err != nil {
			return nil, err
		}
		s.set = set
	}
	return s.set, nil
}

// runID is id made unique on the shared servers: a configuration run
// again must not meet the keys its first attempt left.
func (s *shared) runID(id string) string { return fmt.Sprintf("%s-%d", id, s.runs.Add(1)) }

// Close ends the servers, if they were started.
func (s *shared) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.set == nil {
		return nil
	}
	return s.set.Close()
}

// start starts Redis for one configuration or one run: masters
// independent masters, or (0) a primary with two replicas; with clocks
// the lab can move, where the clock shim builds (see clockshim).
func start(ctx context.Context, masters int, clocks bool) (*redisd.Set, error) {
	if clocks {
		_, err := clockshim.Build(ctx)
		clocks = err == nil
	}
	opts := redisd.Options{Clocks: clocks}
	if masters > 0 {
		return redisd.StartIndependent(ctx, masters, opts)
	}
	return redisd.StartReplicated(ctx, redisMembers-1, opts)
}
