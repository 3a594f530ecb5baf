package clockshim_test

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/clockshim"
)

// A program run with a clock's Env reads the wall clock moved by the
// clock's offset, forward and back; its monotonic clock is not moved.
func TestAClockMovesAProgramsWallClock(t *testing.T) {
	shim, err := clockshim.Build(t.Context())
	if err != nil {
		t.Skipf("%v", err)
	}
	date, err := exec.LookPath("date")
	if err != nil {
		t.Skip("no date program")
	}
	c, err := clockshim.New(t.TempDir())
	require.NoError(t, err)
	read := func() time.Duration {
		cmd := exec.Command(date, "+%s%N")
		cmd.Env = c.Env(shim)
		out, err := cmd.Output()
		require.NoError(t, err)
		ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		require.NoError(t, err)
		return time.Duration(ns - time.Now().UnixNano())
	}
	assert.InDelta(t, 0, read().Seconds(), 5, "no offset yet")
	require.NoError(t, c.Jump(time.Hour))
	assert.InDelta(t, time.Hour.Seconds(), read().Seconds(), 5)
	require.NoError(t, c.Jump(-3*time.Hour))
	assert.Equal(t, -2*time.Hour, c.Offset())
	assert.InDelta(t, (-2 * time.Hour).Seconds(), read().Seconds(), 5)
	require.NoError(t, c.Reset())
	assert.InDelta(t, 0, read().Seconds(), 5)
}
