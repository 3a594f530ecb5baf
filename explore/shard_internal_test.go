package explore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/script"
)

// drawn runs an exploration whose cases are not run but recorded (their
// picks, by case number), failing the property on the case whose picks
// are failOn.
func drawn(t *testing.T, cfg Config, failOn string) (map[int]string, *exploration) {
	t.Helper()
	cfg.MaxSteps, cfg.ShrinkTime = 10, time.Second
	cfg.Walk.Faults = script.WalkFaults()
	got := map[int]string{}
	cfg.Property = Property{Name: "test", Holds: func(c *Case) error {
		if c.Script == failOn {
			return errors.New("fails")
		}
		return nil
	}}
	x := &exploration{ctx: context.Background(), cfg: cfg, seen: map[string]*Case{}, firstAt: map[string]int{}}
	x.runCase = func(_ context.Context, _ Config, picks []int) (*Case, error) {
		if !x.shrinking {
			got[max(x.number, x.res.Cases)] = fmt.Sprint(picks)
		}
		return &Case{Script: fmt.Sprint(picks)}, nil
	}
	_, err := x.explore()
	require.NoError(t, err)
	return got, x
}

// Four shards of an exploration of 40 cases draw between them the very
// scripts the unsharded exploration draws, case for case (a case whose
// script was drawn before is not run again, so the unsharded run and a
// shard may each skip a different few); a failure in one shard is that
// shard's to shrink and report.
func TestShardsDrawTheUnshardedCases(t *testing.T) {
	all, _ := drawn(t, Config{Cases: 40, Seed: 7}, "")
	require.Greater(t, len(all), 30)
	union := map[int]string{}
	for k := 1; k <= 4; k++ {
		part, _ := drawn(t, Config{Cases: 40, Seed: 7, Shard: k, Shards: 4}, "")
		assert.GreaterOrEqual(t, len(part), 8, "shard %d", k)
		for i, picks := range part {
			assert.Equal(t, k, (i-1)%4+1, "case %d belongs to shard %d", i, (i-1)%4+1)
			assert.True(t, i >= 1 && i <= 40)
			union[i] = picks
		}
	}
	for i, picks := range all {
		assert.Equal(t, picks, union[i], "case %d", i)
	}
	assert.Greater(t, len(union), len(all)-1)

	// Case 23 fails: shard 3 (cases 3, 7, …, 23) stops there, shrinks it.
	part, x := drawn(t, Config{Cases: 40, Seed: 7, Shard: 3, Shards: 4}, all[23])
	require.NotNil(t, x.failing)
	assert.Equal(t, 23, slices.Max(slices.Collect(maps.Keys(part))), "no case after the failing one")
	_, x = drawn(t, Config{Cases: 40, Seed: 7, Shard: 2, Shards: 4}, all[23])
	assert.Nil(t, x.failing, "the other shards do not draw it")
}

// Explorations running at once (rapid's flags are its package's) each
// draw the cases they draw alone, and shrink their own failure.
func TestExplorationsAtOnceDrawTheirOwnCases(t *testing.T) {
	// Shards check one case at a time: each sets the flags anew.
	cfgs := []Config{{Cases: 30, Seed: 3}, {Cases: 40, Seed: 11, Shard: 1, Shards: 2}, {Cases: 40, Seed: 7, Shard: 2, Shards: 2},
		{Cases: 40, Seed: 9, Shard: 1, Shards: 2}, {Cases: 25, Seed: 5}}
	alone := make([]map[int]string, len(cfgs))
	for i, cfg := range cfgs {
		alone[i], _ = drawn(t, cfg, "")
	}
	// Another goroutine's turn between setting the flags and the check.
	beforeCheck = func() {
		for range 50 {
			runtime.Gosched()
		}
	}
	defer func() { beforeCheck = nil }()
	failOn := alone[4][9] // the last one fails at its ninth case
	together := make([]map[int]string, len(cfgs))
	xs := make([]*exploration, len(cfgs))
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		wg.Go(func() { together[i], xs[i] = drawn(t, cfg, failOn) })
	}
	wg.Wait()
	for i := range cfgs[:4] {
		assert.Equal(t, alone[i], together[i], "exploration %d drew other cases beside others", i)
	}
	require.NotNil(t, xs[4].failing, "the failing case was not drawn")
	assert.Equal(t, 9, slices.Max(slices.Collect(maps.Keys(together[4]))), "no case after the failing one")
	for k, v := range alone[4] {
		if k <= 9 {
			assert.Equal(t, v, together[4][k], "case %d", k)
		}
	}
}

// Every case drawn has its line in the progress, numbered one after
// another: a case that draws a script drawn before says so, and is not run
// again.
func TestEveryCaseDrawnIsPrinted(t *testing.T) {
	var out strings.Builder
	_, x := drawn(t, Config{Cases: 40, Seed: 7, Progress: &out}, "")
	var numbers []int
	again := 0
	for line := range strings.Lines(out.String()) {
		var n int
		_, err := fmt.Sscanf(line, "case %d:", &n)
		require.NoError(t, err, "line %q", line)
		numbers = append(numbers, n)
		if strings.Contains(line, "drawn again") {
			again++
		}
	}
	require.Len(t, numbers, 40)
	for i, n := range numbers {
		assert.Equal(t, i+1, n)
	}
	assert.Equal(t, x.res.Cases-x.res.Runs, again, "every case not run says it was drawn before")
}
