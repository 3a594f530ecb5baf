//go:build unix

package redisd

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Close leaves no server process and no data directory behind, a killed
// server included.
func TestCloseLeavesNothingBehind(t *testing.T) {
	if _, err := Find(); err != nil {
		t.Skipf("%v: the Redis store was not tried", err)
	}
	s, err := StartReplicated(t.Context(), 2, Options{})
	require.NoError(t, err)
	var pids []int
	for _, srv := range s.servers {
		pids = append(pids, srv.proc.Pid())
	}
	s.Kill(1)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "a second Close does nothing")
	for _, pid := range pids {
		assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "process %d is gone", pid)
	}
	_, err = os.Stat(s.root)
	assert.True(t, os.IsNotExist(err), "the data directories are removed")
	_, err = s.Link(0)
	assert.Error(t, err, "a closed set makes no links")
}
