package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A member cut off from the quorum while it led answers a lease question
// from its own lessor until it steps down, knowing nothing of a lease the
// new leader granted: it is not asked while the majority's side can be,
// even when it answered last.
func TestALeaseIsNotAskedOfAMemberCutOff(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Config{Members: 3})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	old, err := c.WaitLeader(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Partition([]string{old}))
	leader, err := c.WaitLeader(ctx, old)
	require.NoError(t, err)
	m, err := c.member(leader)
	require.NoError(t, err)
	lease, err := m.admin.Grant(ctx, 5)
	require.NoError(t, err)
	for i, x := range c.members {
		if x.name == old {
			c.answering.Store(int32(i)) // as if it had answered last
		}
	}
	alive, err := c.LeaseAlive(ctx, lease.ID)
	require.NoError(t, err)
	assert.True(t, alive, "asked of %s, cut off", old)
	require.NoError(t, c.Heal())
}
