package faults_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/faults"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func genConfig(seed uint64) faults.GenConfig {
	return faults.GenConfig{
		Seed:    seed,
		Members: []string{"m1", "m2", "m3"},
		Clients: []string{"c1", "c2", "c3"},
		Points:  []string{"after-acquire", "before-write", "before-release"},
		Steps:   25,
	}
}

// The schedule for a seed is part of the lab's contract: a report records the
// seed, and replaying it must apply the same faults. If this test fails, the
// generator changed and every recorded seed now means something else.
func TestScheduleGolden(t *testing.T) {
	s, err := faults.Generate(genConfig(42))
	require.NoError(t, err)
	got, err := s.MarshalIndent()
	require.NoError(t, err)
	path := filepath.Join("testdata", "schedule-seed42.json")
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "run with -update only if the change is meant")
}

func TestScheduleIsAFunctionOfTheSeed(t *testing.T) {
	for seed := range uint64(50) {
		a, err := faults.Generate(genConfig(seed))
		require.NoError(t, err)
		b, err := faults.Generate(genConfig(seed))
		require.NoError(t, err)
		ab, _ := a.MarshalIndent()
		bb, _ := b.MarshalIndent()
		require.Equal(t, string(ab), string(bb), "seed %d", seed)
		other, err := faults.Generate(genConfig(seed + 1000))
		require.NoError(t, err)
		assert.NotEqual(t, a.Steps, other.Steps, "seed %d and %d drew the same schedule", seed, seed+1000)
	}
}

func TestScheduleStepsAreValidAndOrdered(t *testing.T) {
	seen := map[faults.Kind]bool{}
	for seed := range uint64(50) {
		s, err := faults.Generate(genConfig(seed))
		require.NoError(t, err)
		require.Len(t, s.Steps, 25)
		var end time.Duration
		for _, st := range s.Steps {
			require.NoError(t, st.Fault.Validate())
			seen[st.Fault.Kind] = true
			assert.Greater(t, st.At.Std(), end, "faults run one at a time, with a gap")
			assert.GreaterOrEqual(t, st.Hold, faults.DefaultHoldMin)
			assert.LessOrEqual(t, st.Hold, faults.DefaultHoldMax)
			end = st.At.Std() + st.Hold.Std()
			if st.Fault.Kind == faults.Partition {
				require.Len(t, st.Fault.Groups, 2)
				assert.Len(t, append(st.Fault.Groups[0], st.Fault.Groups[1]...), 3)
			}
		}
	}
	for _, k := range faults.RandomKinds {
		assert.True(t, seen[k], "no schedule drew %s", k)
	}
}

func TestScheduleByDuration(t *testing.T) {
	cfg := genConfig(7)
	cfg.Steps, cfg.Duration = 0, faults.Duration(20*time.Second)
	s, err := faults.Generate(cfg)
	require.NoError(t, err)
	require.NotEmpty(t, s.Steps)
	last := s.Steps[len(s.Steps)-1]
	assert.LessOrEqual(t, last.At.Std()+last.Hold.Std(), 20*time.Second)
}

func TestScheduleOnlyAllowedKinds(t *testing.T) {
	cfg := genConfig(3)
	cfg.Kinds = []faults.Kind{faults.PauseClient, faults.CutClient}
	cfg.Members = nil
	s, err := faults.Generate(cfg)
	require.NoError(t, err)
	for _, st := range s.Steps {
		assert.Contains(t, cfg.Kinds, st.Fault.Kind)
	}
}

func TestScheduleRoundTrip(t *testing.T) {
	s, err := faults.Generate(genConfig(9))
	require.NoError(t, err)
	b, err := s.MarshalIndent()
	require.NoError(t, err)
	back, err := faults.ParseSchedule(b)
	require.NoError(t, err)
	assert.Equal(t, s, back)
}

func TestGenerateRejectsBadConfig(t *testing.T) {
	bad := []faults.GenConfig{
		{Seed: 1, Steps: 3, Kinds: []faults.Kind{"flood"}, Members: []string{"m1"}},
		{Seed: 1, Steps: 3, Kinds: []faults.Kind{faults.KillMember}, Clients: []string{"c1"}},
		{Seed: 1, Steps: 3, Kinds: []faults.Kind{faults.CutClient}, Members: []string{"m1"}},
		{Seed: 1, Members: []string{"m1"}, Clients: []string{"c1"}},
		{Seed: 1, Steps: 3, Members: []string{"m1", "m2"}, Clients: []string{"c1"}, HoldMin: 10, HoldMax: 5},
	}
	for _, cfg := range bad {
		_, err := faults.Generate(cfg)
		assert.Error(t, err, "%+v", cfg)
	}
}

func TestParseScheduleRejectsBadInput(t *testing.T) {
	for _, in := range []string{
		`{"steps": [`,
		`{"steps": [{"at": "1s", "fault": {"kind": "kill-member"}, "hold": "1s"}]}`,
		`{"steps": [{"at": "soon", "fault": {"kind": "heal"}, "hold": "1s"}]}`,
		`{"steps": [{"at": "-1s", "fault": {"kind": "heal"}, "hold": "1s"}]}`,
	} {
		_, err := faults.ParseSchedule([]byte(in))
		assert.Error(t, err, in)
	}
}

func TestFaultStrings(t *testing.T) {
	cases := map[string]faults.Fault{
		"partition m1 | m2 m3":            {Kind: faults.Partition, Groups: [][]string{{"m1"}, {"m2", "m3"}}},
		"kill-leader":                     {Kind: faults.KillLeader},
		"pause-client c1 at before-write": {Kind: faults.PauseClient, Client: "c1", Point: "before-write"},
		"expire-lease c2 (lapse)":         {Kind: faults.ExpireLease, Client: "c2", Mode: faults.ModeLapse},
		"delay-client c1 50ms":            {Kind: faults.DelayClient, Client: "c1", Delay: faults.Duration(50 * time.Millisecond)},
		"crash-client c3":                 {Kind: faults.CrashClient, Client: "c3"},
	}
	for want, f := range cases {
		assert.Equal(t, want, f.String())
		assert.NoError(t, f.Validate())
	}
}
