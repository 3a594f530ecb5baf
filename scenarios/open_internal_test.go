package scenarios

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flakyStore is a store whose first fails starts fail.
type flakyStore struct {
	Store
	fails, opens int
}

func (f *flakyStore) Open(context.Context, EngineConfig) (Engine, func() error, error) {
	f.opens++
	if f.opens <= f.fails {
		return nil, nil, errors.New("redisd: r2 did not serve")
	}
	return nil, func() error { return nil }, nil
}

// A store that would not start is started again — nothing of the lock's
// has run — and the result says what the earlier attempts met; one that
// never starts is an error after Attempts tries.
func TestAStoreThatWouldNotStartIsStartedAgain(t *testing.T) {
	st := &flakyStore{fails: 1}
	_, closeEnv, earlier, err := open(t.Context(), st, EngineConfig{RunID: "r"})
	require.NoError(t, err)
	require.NoError(t, closeEnv())
	assert.Equal(t, []string{"attempt 1: the store did not start: redisd: r2 did not serve"}, earlier)

	st = &flakyStore{fails: 99}
	_, _, earlier, err = open(t.Context(), st, EngineConfig{RunID: "r"})
	require.EqualError(t, err, "redisd: r2 did not serve")
	assert.Equal(t, Attempts, st.opens)
	assert.Len(t, earlier, Attempts-1)
}

// A scenario that kills, isolates or fails over a member has servers of its
// own; the others may share theirs.
func TestOnlyAScenarioThatFaultsNoMemberShares(t *testing.T) {
	for name, faults := range map[string]bool{
		"paused-holder": false, "lost-request": false, "isolated-asks": true, "failover": true, "leader-failover": true,
		"leader-killed": true, "server-isolated": true,
	} {
		s, err := Lookup(name)
		require.NoError(t, err)
		assert.Equal(t, faults, s.faultsMembers(), name)
	}
	s, err := FromScript("mine", "mine.txt", "client c1 member=m1\n----\nx\n\nkill member=m2\n----\nx\n\ncheck\n----\nfenced: PASS\n")
	require.NoError(t, err)
	assert.True(t, s.faultsMembers(), "a script of one's own that kills a member")
}
