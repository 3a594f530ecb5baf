package explore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
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
	x := &exploration{ctx: context.Background(), cfg: cfg, seen: map[string]*Case{}}
	x.runCase = func(_ context.Context, _ Config, picks []int) (*Case, error) {
		if !x.shrinking {
			got[max(x.number, x.res.Cases)] = fmt.Sprint(picks)
		}
		return &Case{Script: fmt.Sprint(picks)}, nil
	}
	rapidMu.Lock()
	defer rapidMu.Unlock()
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
