package faults

import (
	"context"
	"fmt"
	"time"
)

// DefaultWait bounds a Condition that names no timeout.
const DefaultWait = 10 * time.Second

// Condition is an observable state of the cluster to wait for. Exactly one of
// LeaseGone, LeaderOtherThan / Leader, Readable is set.
type Condition struct {
	// LeaseGone: the server no longer has the lease this client recorded.
	LeaseGone string `json:"lease_gone,omitempty"`
	// Leader: a majority follows some leader, which is not LeaderOtherThan.
	Leader          bool   `json:"leader,omitempty"`
	LeaderOtherThan string `json:"leader_other_than,omitempty"`
	// Readable: this member answers a linearizable read.
	Readable string `json:"readable,omitempty"`
	// Timeout bounds the wait; zero means DefaultWait.
	Timeout Duration `json:"timeout,omitempty"`
}

// String says what the condition waits for.
func (c Condition) String() string {
	switch {
	case c.LeaseGone != "":
		return fmt.Sprintf("the server no longer has %s's lease", c.LeaseGone)
	case c.LeaderOtherThan != "":
		return "a leader other than " + c.LeaderOtherThan
	case c.Leader:
		return "a leader"
	case c.Readable != "":
		return c.Readable + " answers a linearizable read"
	}
	return "nothing"
}

// Await waits until cond holds, up to its timeout. The error says what was
// waited for.
func (n *Nemesis) Await(ctx context.Context, cond Condition) error {
	timeout := cond.Timeout.Std()
	if timeout <= 0 {
		timeout = DefaultWait
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var err error
	switch {
	case cond.LeaseGone != "":
		cl, cerr := n.c.Client(cond.LeaseGone)
		if cerr != nil {
			return cerr
		}
		lease := cl.Lease()
		if lease == 0 {
			return fmt.Errorf("until %s: client %s has no lease recorded", cond, cond.LeaseGone)
		}
		err = n.c.WaitLeaseGone(ctx, lease)
	case cond.Leader || cond.LeaderOtherThan != "":
		var except []string
		if cond.LeaderOtherThan != "" {
			except = []string{cond.LeaderOtherThan}
		}
		_, err = n.c.WaitLeader(ctx, except...)
	case cond.Readable != "":
		err = n.c.WaitLinearizableRead(ctx, cond.Readable)
	default:
		return fmt.Errorf("condition names nothing to wait for")
	}
	if err != nil {
		return fmt.Errorf("until %s (timeout %v): %w", cond, timeout, err)
	}
	return nil
}
