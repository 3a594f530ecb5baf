package pausegate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/pausegate"
)

func TestAPauseReachedOnTheWireHoldsNoWorker(t *testing.T) {
	parks := 0
	g := pausegate.Gate{Name: "c1", OnPark: func() { parks++ }}
	assert.False(t, g.Reach("in-release"), "nothing is armed")
	assert.False(t, g.Reach(""), "nothing is armed at no point")
	require.NoError(t, g.Arm("in-release"))
	assert.Equal(t, "in-release", g.Armed())
	assert.False(t, g.Reach("before-release"), "armed at another point")
	assert.True(t, g.Reach("in-release"))
	assert.False(t, g.Reach("in-release"), "stopped once")
	at, err := g.WaitPaused(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "in-release", at)
	assert.Equal(t, "in-release", g.Paused())
	assert.NoError(t, g.PausePoint(context.Background(), "in-release"), "the worker is not stopped again")
	healed := false
	g.Resume(func() { healed = true })
	assert.True(t, healed)
	assert.Equal(t, 1, parks)
	assert.Empty(t, g.Armed())
}

func TestACrashWhileStoppedOnTheWireLeavesNoCrashBehind(t *testing.T) {
	g := pausegate.Gate{Name: "c1"}
	require.NoError(t, g.Arm("in-release"))
	require.True(t, g.Reach("in-release"))
	g.Kill()
	// A later pause, at a point the worker blocks at, is not told of the
	// old crash.
	require.NoError(t, g.Arm("before-release"))
	done := make(chan error, 1)
	go func() { done <- g.PausePoint(context.Background(), "before-release") }()
	_, err := g.WaitPaused(context.Background())
	require.NoError(t, err)
	g.Resume(nil)
	assert.NoError(t, <-done)
}
