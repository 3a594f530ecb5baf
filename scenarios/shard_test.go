package scenarios

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseShard(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == JobIndexEnv {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		in, index string
		want      Shard
		err       string
	}{
		{in: "2/4", want: Shard{2, 4}},
		{in: "1/1", want: Shard{1, 1}},
		{in: "auto/8", index: "0", want: Shard{1, 8}},
		{in: "auto/8", index: "7", want: Shard{8, 8}},
		{in: "auto/8", index: "8", err: "shard 9 of 8 does not exist"},
		{in: "auto/8", err: "JOB_COMPLETION_INDEX is \"\""},
		{in: "0/4", err: "shard 0 of 4 does not exist"},
		{in: "5/4", err: "shard 5 of 4 does not exist"},
		{in: "4", err: "want K/N"},
		{in: "a/4", err: "want K/N"},
		{in: "1/0", err: "want K/N"},
	} {
		got, err := ParseShard(tc.in, env(tc.index))
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

// The shards of a campaign run every job exactly once, each about as many
// as the next.
func TestShardsPartitionTheJobs(t *testing.T) {
	for n := 1; n <= 6; n++ {
		for jobs := 0; jobs <= 25; jobs++ {
			counts := make([]int, n)
			for i := range jobs {
				owners := 0
				for k := 1; k <= n; k++ {
					if (Shard{k, n}).keeps(i) {
						owners++
						counts[k-1]++
					}
				}
				require.Equal(t, 1, owners, "job %d of %d, %d shards", i, jobs, n)
			}
			assert.LessOrEqual(t, counts[0]-counts[n-1], 1, "balanced: %v", counts)
		}
	}
}

func TestMergeRefuses(t *testing.T) {
	camp := func(k int) *Campaign {
		return &Campaign{Scenarios: []string{"s"}, Locks: []string{"l"}, Resources: []string{"unfenced"}, Seed: 1, Runs: 2,
			Members: 3, LeaseScale: 1, Jobs: 2, Shard: Shard{k, 2}}
	}
	res := func(seed uint64) []Result {
		return []Result{{Scenario: "s", Lock: "l", Resource: "unfenced", Seed: seed, Verdict: "PASS", Matches: true}}
	}
	one := Summary{Version: Version, Complete: true, Results: res(2), Campaign: camp(1)}
	two := Summary{Version: Version, Complete: true, Results: res(1), Campaign: camp(2)}
	m, err := Merge([]Summary{one, two}, []string{"a", "b"})
	require.NoError(t, err)
	assert.Equal(t, []uint64{1, 2}, []uint64{m.Results[0].Seed, m.Results[1].Seed}, "the unsharded order")
	assert.Zero(t, m.Campaign.Shard)
	assert.True(t, m.Complete)

	old := two
	old.Version = "0.0.1"
	_, err = Merge([]Summary{one, old}, []string{"a", "b"})
	assert.ErrorIs(t, err, ErrNotOneCampaign)
	assert.ErrorContains(t, err, "b is of locklab 0.0.1")

	other := two
	other.Campaign = camp(2)
	other.Campaign.Seed = 7
	_, err = Merge([]Summary{one, other}, []string{"a", "b"})
	assert.ErrorContains(t, err, "b was not run with the flags of a (--scenario s --lock l --resource unfenced --seed 1 --runs 2")

	twice := two
	twice.Results = res(2)
	_, err = Merge([]Summary{one, twice}, []string{"a", "b"})
	assert.ErrorContains(t, err, "s × l × unfenced seed 2 was run twice")

	bare := one
	bare.Campaign = nil
	_, err = Merge([]Summary{bare}, []string{"a"})
	assert.ErrorContains(t, err, "records no campaign")

	_, err = Merge([]Summary{two}, []string{"b"})
	assert.ErrorIs(t, err, ErrShardsMissing)
	assert.ErrorContains(t, err, "1/2")

	cut := two
	cut.Complete = false
	m, err = Merge([]Summary{one, cut}, []string{"a", "b"})
	require.NoError(t, err)
	assert.False(t, m.Complete, "a shard interrupted leaves the campaign incomplete")
	assert.Equal(t, 3, m.ExitCode())
}

// A schedule and a results file written while the lease scale was called
// "ttl" still read, the scale kept; a field of neither is still refused.
func TestTheLeaseScaleReadsUnderItsOldName(t *testing.T) {
	var p Plan
	require.NoError(t, json.Unmarshal([]byte(`{"scenario":"paused-holder","seed":1,"ttl":2}`), &p))
	assert.Equal(t, 2, p.LeaseScale)
	require.NoError(t, json.Unmarshal([]byte(`{"scenario":"paused-holder","seed":1,"lease_scale":3}`), &p))
	assert.Equal(t, 3, p.LeaseScale)
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"scenario":"paused-holder","nope":1}`), &p), `unknown field "nope"`)
	var c Campaign
	require.NoError(t, json.Unmarshal([]byte(`{"seed":1,"runs":1,"members":3,"ttl":2,"jobs":1}`), &c))
	assert.Equal(t, 2, c.LeaseScale)
	b, err := json.Marshal(c)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"lease_scale":2`)
	assert.NotContains(t, string(b), `"ttl"`)
}
