package live_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/live"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/scenarios/etcdstore"
)

// Commands that come at once — a double click, two browsers — run one
// after the other: eight critical sections sent together read eight
// different values, each one the last one's write.
func TestCommandsRunOneAtATime(t *testing.T) {
	lab, _ := startLab(t)
	for _, line := range []string{"client c1 member=m1", "acquire c1"} {
		_, err := lab.Do(t.Context(), line)
		require.NoError(t, err)
	}
	const n = 8
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			out, err := lab.Do(t.Context(), "cs c1")
			assert.NoError(t, err)
			outs[i] = out
		})
	}
	wg.Wait()
	for v := range n {
		assert.Contains(t, outs, fmt.Sprintf("c1: unfenced read %d wrote %d; fenced read %d wrote %d; etcd-guarded read %d wrote %d",
			v, v+1, v, v+1, v, v+1))
	}
	assert.Len(t, lab.State().Steps, n+2)
}

// A reset waits for the step in flight: c2's acquire, waiting behind c1,
// runs to its own end (its deadline) on the run it began on, rather than
// having that run closed under it.
func TestAResetWaitsForTheStepInFlight(t *testing.T) {
	lab, _ := startLab(t)
	for _, line := range []string{"client c1 member=m1", "client c2 member=m2", "acquire c1"} {
		_, err := lab.Do(t.Context(), line)
		require.NoError(t, err)
	}
	before := lab.State().Version
	done := make(chan string, 1)
	began := time.Now()
	go func() {
		out, _ := lab.Do(t.Context(), "acquire c2")
		done <- out
	}()
	// c2's acquire shows in the history: it is in flight.
	require.Eventually(t, func() bool { return lab.State().Version > before }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, lab.Reset("queue"))
	out := <-done
	assert.Equal(t, "c2: error: timed out", out, "the step ran to its deadline")
	assert.GreaterOrEqual(t, time.Since(began), 2*time.Second)
	assert.Equal(t, "queue", lab.State().Lock)
	assert.Empty(t, lab.State().Steps, "the step belonged to the run the reset ended")
}

// A lab has at most live.MaxClients clients, and steps through the
// lessons of its own store only.
func TestALabKeepsToItsBounds(t *testing.T) {
	lab, _ := startLab(t)
	for i := 1; i <= live.MaxClients; i++ {
		_, err := lab.Do(t.Context(), fmt.Sprintf("client c%d member=m%d", i, i%3+1))
		require.NoError(t, err)
	}
	_, err := lab.Do(t.Context(), "client c1 member=m2")
	assert.NoError(t, err, "a client the run has may move")
	_, err = lab.Do(t.Context(), fmt.Sprintf("client c%d member=m1", live.MaxClients+1))
	assert.ErrorContains(t, err, fmt.Sprintf("the lab has its %d clients", live.MaxClients))

	assert.ErrorContains(t, lab.Load("failover"), "failover needs a store that can fail its primary over to a replica (failover), which a lock on etcd cannot")
	assert.NotContains(t, live.Lessons(etcdstore.Kind()), "failover")
	assert.Contains(t, live.Lessons(etcdstore.Kind()), "paused-holder")
	redis, ok := scenarios.KindOf("redis-setnx")
	require.True(t, ok)
	assert.Contains(t, live.Lessons(redis), "failover")
}
