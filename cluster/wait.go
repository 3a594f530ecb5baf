package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/internal/poll"
)

// attemptTimeout bounds one request of a condition wait, so that a request
// stuck on a member without quorum is retried instead of waited on forever.
const attemptTimeout = time.Second

// probeKey is the key linearizable-read probes read; it need not exist.
const probeKey = "locklab/probe"

// LeaseAlive asks the cluster whether lease id still exists. It is the
// server's answer, not a client's belief. The members are asked one at a
// time, starting with the one that answered last: a member cut off from the
// leader forwards the question through the cut and hangs (or, knowing no
// leader, refuses it), so its silence must not hide the answer the rest of
// the cluster has.
func (c *Cluster) LeaseAlive(ctx context.Context, id clientv3.LeaseID) (bool, error) {
	_, alive, err := c.LeaseTTL(ctx, id)
	return alive, err
}

// LeaseTTL is LeaseAlive that also tells, for a live lease, the TTL the
// server granted it (which may be longer than the one asked for: etcd
// raises a TTL below its minimum).
//
// A member on the minority side of a partition is not asked while another
// can be: cut off while it led, it goes on answering from its own lessor
// until it steps down, and knows neither a lease the new leader granted nor
// a revoke since.
func (c *Cluster) LeaseTTL(ctx context.Context, id clientv3.LeaseID) (granted time.Duration, alive bool, err error) {
	n := len(c.members)
	first := int(c.answering.Load())
	cutOff := c.cutOff()
	var errs []error
	for i := range n {
		k := (first + i) % n
		m := c.members[k]
		if !c.IsExternal() && !m.running() || cutOff[m.name] {
			continue
		}
		actx, cancel := context.WithTimeout(clientv3.WithRequireLeader(ctx), memberAttemptTimeout)
		resp, err := m.admin.TimeToLive(actx, id)
		cancel()
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			c.answering.Store(int32(k))
			return 0, false, nil
		case err == nil:
			c.answering.Store(int32(k))
			// TTL is whole seconds left, truncated: a live 1 s lease often
			// reports 0. An expired or revoked lease reports -1.
			if resp.TTL < 0 {
				return 0, false, nil
			}
			return time.Duration(resp.GrantedTTL) * time.Second, true, nil
		case ctx.Err() != nil:
			return 0, false, ctx.Err()
		}
		errs = append(errs, fmt.Errorf("%s: %w", m.name, err))
	}
	if len(errs) == 0 {
		return 0, false, ErrMemberDown
	}
	return 0, false, errors.Join(errs...)
}

// cutOff names the members on a minority side of the partition in force,
// when another side holds a majority (none when the cluster is whole, or
// no side can make progress).
func (c *Cluster) cutOff() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out map[string]bool
	majority := false
	for _, g := range c.partition {
		if 2*len(g) > len(c.members) {
			majority = true
			continue
		}
		for _, name := range g {
			if out == nil {
				out = map[string]bool{}
			}
			out[name] = true
		}
	}
	if !majority {
		return nil
	}
	return out
}

// memberAttemptTimeout bounds one member's answer to LeaseAlive; a member
// with a leader answers in milliseconds.
const memberAttemptTimeout = 300 * time.Millisecond

// WaitLeaseGone waits until the cluster itself reports lease id gone
// (expired or revoked). A client's own view (Session.Done) lags behind it.
func (c *Cluster) WaitLeaseGone(ctx context.Context, id clientv3.LeaseID) error {
	return poll.Until(ctx, fmt.Sprintf("the server to drop lease %x", int64(id)), c.tick(), func(ctx context.Context) (bool, error) {
		alive, err := c.LeaseAlive(ctx, id)
		return !alive && err == nil, err
	})
}

// LinearizableRead makes one linearizable read through member name only. It
// fails (after about a second) on a member cut off from the majority.
func (c *Cluster) LinearizableRead(ctx context.Context, name string) (*clientv3.GetResponse, error) {
	m, err := c.member(name)
	if err != nil {
		return nil, err
	}
	if !c.Running(name) {
		return nil, fmt.Errorf("%s: %w", name, ErrMemberDown)
	}
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	return m.admin.Get(ctx, probeKey)
}

// WaitLinearizableRead waits until member name answers a linearizable read.
func (c *Cluster) WaitLinearizableRead(ctx context.Context, name string) error {
	return poll.Until(ctx, name+" to answer a linearizable read", c.tick(), func(ctx context.Context) (bool, error) {
		_, err := c.LinearizableRead(ctx, name)
		return err == nil, err
	})
}

// Get reads key through member name only, linearizably.
func (c *Cluster) Get(ctx context.Context, name, key string) (*clientv3.GetResponse, error) {
	m, err := c.member(name)
	if err != nil {
		return nil, err
	}
	return m.admin.Get(ctx, key)
}
