package cluster

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/types"

	"github.com/locklab/locklab/internal/poll"
)

// statusTimeout bounds one member status query of an external cluster.
const statusTimeout = 500 * time.Millisecond

// Leader returns the member that a majority of the cluster's members
// currently follow (a deposed leader in a minority does not count), or
// ErrNoLeader.
func (c *Cluster) Leader(ctx context.Context) (string, error) {
	if err := c.checkOpen(); err != nil {
		return "", err
	}
	votes := map[types.ID]int{}
	names := map[types.ID]string{}
	for _, m := range c.members {
		self, lead, ok := c.memberView(ctx, m)
		if !ok {
			continue
		}
		names[self] = m.name
		if lead != 0 {
			votes[lead]++
		}
	}
	for id, n := range votes {
		if n > len(c.members)/2 && names[id] != "" {
			return names[id], nil
		}
	}
	return "", ErrNoLeader
}

// memberView is member m's own id and the leader it follows.
func (c *Cluster) memberView(ctx context.Context, m *member) (self, lead types.ID, ok bool) {
	if !c.IsExternal() {
		e, err := m.server()
		if err != nil {
			return 0, 0, false
		}
		return e.Server.MemberID(), e.Server.Leader(), true
	}
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	st, err := m.admin.Status(ctx, m.extEndpoint)
	if err != nil {
		return 0, 0, false
	}
	return types.ID(st.Header.MemberId), types.ID(st.Leader), true
}

// WaitLeader waits until the cluster has a leader that is none of except, and
// returns its name.
func (c *Cluster) WaitLeader(ctx context.Context, except ...string) (string, error) {
	var leader string
	what := "a leader"
	if len(except) > 0 {
		what = fmt.Sprintf("a leader other than %v", except)
	}
	err := poll.Until(ctx, what, c.tick(), func(ctx context.Context) (bool, error) {
		l, err := c.Leader(ctx)
		if err != nil {
			return false, err
		}
		leader = l
		if slices.Contains(except, l) {
			return false, fmt.Errorf("leader is still %s", l)
		}
		return true, nil
	})
	return leader, err
}

// MoveLeader hands leadership to member to and waits until a majority follows
// it. Both the current leader and to must be running.
func (c *Cluster) MoveLeader(ctx context.Context, to string) error {
	target, err := c.embeddedMember(to)
	if err != nil {
		return err
	}
	te, err := target.server()
	if err != nil {
		return fmt.Errorf("move leader to %s: %w", to, err)
	}
	from, err := c.WaitLeader(ctx)
	if err != nil {
		return fmt.Errorf("move leader to %s: %w", to, err)
	}
	if from == to {
		return nil
	}
	lm, _ := c.member(from)
	le, err := lm.server()
	if err != nil {
		return fmt.Errorf("move leader to %s: %w", to, err)
	}
	if err := le.Server.MoveLeader(ctx, uint64(le.Server.MemberID()), uint64(te.Server.MemberID())); err != nil {
		return fmt.Errorf("move leader from %s to %s: %w", from, to, err)
	}
	return poll.Until(ctx, "leader "+to, c.tick(), func(ctx context.Context) (bool, error) {
		l, err := c.Leader(ctx)
		return l == to, err
	})
}

// tick is how often condition waits look again: one raft heartbeat.
func (c *Cluster) tick() time.Duration {
	if c.cfg.TickMs == 0 {
		return 10 * time.Millisecond
	}
	return time.Duration(c.cfg.TickMs) * time.Millisecond
}

// Term is the highest Raft term any reachable member reports. It grows by
// at least one with every election, so comparing it before and after some
// work tells whether leadership changed meanwhile.
func (c *Cluster) Term(ctx context.Context) (uint64, error) {
	if err := c.checkOpen(); err != nil {
		return 0, err
	}
	var term uint64
	seen := false
	for _, m := range c.members {
		if !c.IsExternal() {
			e, err := m.server()
			if err != nil {
				continue
			}
			term, seen = max(term, e.Server.Term()), true
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, statusTimeout)
		st, err := m.admin.Status(sctx, m.extEndpoint)
		cancel()
		if err == nil {
			term, seen = max(term, st.RaftTerm), true
		}
	}
	if !seen {
		return 0, fmt.Errorf("cluster: term: %w", ErrNoLeader)
	}
	return term, nil
}

// LeaderView is what one member, up and answering, says of its cluster's
// leadership.
type LeaderView struct {
	// Member names the member.
	Member string
	// Follows says the member follows a leader (or is one).
	Follows bool
	// Term is the member's Raft term: it grows with every election the
	// member takes part in or hears of, however brief.
	Term uint64
}

// LeaderViews is every member's view of its leader now, in order. A member
// that is down or does not answer is left out: it said nothing. Nil once
// the cluster is closed.
func (c *Cluster) LeaderViews(ctx context.Context) []LeaderView {
	if c.checkOpen() != nil {
		return nil
	}
	var out []LeaderView
	for _, m := range c.members {
		if v, ok := c.leaderView(ctx, m); ok {
			out = append(out, v)
		}
	}
	return out
}

// leaderView is member m's view of its leader, if it answers.
func (c *Cluster) leaderView(ctx context.Context, m *member) (LeaderView, bool) {
	if !c.IsExternal() {
		e, err := m.server()
		if err != nil {
			return LeaderView{}, false
		}
		return LeaderView{Member: m.name, Follows: e.Server.Leader() != 0, Term: e.Server.Term()}, true
	}
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	st, err := m.admin.Status(ctx, m.extEndpoint)
	if err != nil {
		return LeaderView{}, false
	}
	return LeaderView{Member: m.name, Follows: st.Leader != 0, Term: st.RaftTerm}, true
}
