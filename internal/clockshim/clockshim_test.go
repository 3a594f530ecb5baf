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
	c, read := dated(t)
	assert.InDelta(t, 0, read().Seconds(), 5, "no offset yet")
	require.NoError(t, c.Jump(time.Hour))
	assert.InDelta(t, time.Hour.Seconds(), read().Seconds(), 5)
	require.NoError(t, c.Jump(-3*time.Hour))
	assert.Equal(t, -2*time.Hour, c.Offset())
	assert.InDelta(t, (-2 * time.Hour).Seconds(), read().Seconds(), 5)
	require.NoError(t, c.Reset())
	assert.InDelta(t, 0, read().Seconds(), 5)
}

// A program run with a clock that drifts reads a wall clock that runs at
// the clock's rate from where it was; reset, the machine's again.
func TestAClockDrifts(t *testing.T) {
	c, read := dated(t)
	require.NoError(t, c.Jump(time.Hour))
	require.NoError(t, c.Drift(1000)) // a second every millisecond
	// Ten seconds gained beyond the jump come within milliseconds of the
	// machine's: the program reads them, and so does Offset.
	require.Eventually(t, func() bool { return read() > time.Hour+10*time.Second }, 10*time.Second, 5*time.Millisecond)
	assert.Greater(t, c.Offset(), time.Hour+10*time.Second)
	require.NoError(t, c.Reset())
	assert.InDelta(t, 0, read().Seconds(), 5)
	assert.Zero(t, c.Offset())
	assert.Error(t, c.Drift(0))
}

// dated is a new clock and how far from the machine's a program run on it
// (date) reads the wall clock; it skips the test without a C compiler.
func dated(t *testing.T) (*clockshim.Clock, func() time.Duration) {
	t.Helper()
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
	return c, func() time.Duration {
		cmd := exec.Command(date, "+%s%N")
		cmd.Env = c.Env(shim)
		out, err := cmd.Output()
		require.NoError(t, err)
		ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		require.NoError(t, err)
		return time.Duration(ns - time.Now().UnixNano())
	}
}
