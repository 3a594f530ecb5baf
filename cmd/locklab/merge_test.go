package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/scenarios"
)

// A campaign run as three shards and merged gives what the unsharded run
// gives: the same results in the same order, the same JUnit counts, the
// same exit status (1 here: --expect pass, and paused-holder loses an
// update on the unfenced counter). Missing shards, a shard given twice,
// other flags and a broken results file are refused with one line and exit
// status 2, writing nothing.
func TestShardsMergeToTheUnshardedRun(t *testing.T) {
	t.Parallel() // runs on clusters of its own, mostly waiting
	if testing.Short() {
		t.Skip("runs a small campaign four times")
	}
	dir := t.TempDir()
	flags := []string{"run", "--scenario", "stale-release,paused-holder", "--lock", "queue,ttl-poll", "--runs", "2",
		"--expect", "pass", "--parallel", "2"}
	shard := func(name string, extra ...string) (int, string) {
		out := filepath.Join(dir, name)
		code, _, stderr := locklab(t, t.Context(), append(append(append([]string{}, flags...), "--out", out), extra...)...)
		require.Empty(t, stderr)
		return code, out
	}
	wantCode, all := shard("all")
	assert.Equal(t, 1, wantCode)
	var shards []string
	for _, k := range []string{"1/3", "2/3", "3/3"} {
		code, out := shard("s"+k[:1], "--shard", k)
		assert.Equal(t, 1, code, "shard %s", k) // every shard holds a paused-holder job
		shards = append(shards, out)
	}
	merged := filepath.Join(dir, "merged")
	code, stdout, stderr := locklab(t, t.Context(), append([]string{"merge", "--out", merged}, shards...)...)
	require.Empty(t, stderr)
	assert.Equal(t, wantCode, code)
	assert.Contains(t, stdout, "24 configuration(s)")

	verdicts := func(d string) []string {
		var s scenarios.Summary
		b, err := os.ReadFile(filepath.Join(d, "results.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &s))
		var out []string
		for _, r := range s.Results {
			out = append(out, strings.Join([]string{r.Scenario, r.Lock, r.Resource, string(rune('0' + r.Seed)),
				string(r.Verdict), string(r.Expected)}, " "))
			_, err := os.Stat(r.History)
			assert.NoError(t, err, "every history is in the report's directory")
		}
		return out
	}
	assert.Equal(t, verdicts(all), verdicts(merged))
	assert.Equal(t, junitCounts(t, filepath.Join(all, "junit.xml")), junitCounts(t, filepath.Join(merged, "junit.xml")))

	// A shard whose directory lost one of its histories.
	broken := filepath.Join(dir, "broken")
	require.NoError(t, os.CopyFS(broken, os.DirFS(shards[1])))
	gone, err := filepath.Glob(filepath.Join(broken, "*", "*", "*", "*.history.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, gone)
	require.NoError(t, os.Remove(gone[0]))
	for _, tc := range []struct {
		name string
		dirs []string
		want string
	}{
		{"a shard's history missing", []string{shards[0], broken, shards[2]}, "merge: " + broken + ": history: open " + gone[0]},
		{"a missing shard", []string{shards[0], shards[2]}, "shards missing: 2/3 (run them with --shard K/3"},
		{"a shard twice", []string{shards[0], shards[0], shards[1], shards[2]}, "shard 1/3 given twice"},
		{"the unsharded run among them", []string{shards[0], shards[1], all}, "all ran the whole campaign (no --shard)"},
		{"no results", []string{shards[0], dir}, "no results.json there; merge takes whole runs"},
		{"a configuration's directory", []string{shards[0], filepath.Dir(gone[0])}, "one configuration's directory (replay takes that)"},
		{"no such directory", []string{shards[0], filepath.Join(dir, "gone")}, "gone: no such directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "m")
			code, _, stderr := locklab(t, t.Context(), append([]string{"merge", "--out", out}, tc.dirs...)...)
			assert.Equal(t, exitUsage, code)
			oneLine(t, stderr, tc.want)
			_, err := os.Stat(out)
			assert.True(t, os.IsNotExist(err), "nothing written")
		})
	}
}

// junitCounts is the test and failure counts of a JUnit file's suites.
func junitCounts(t *testing.T, file string) string {
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var counts []string
	for _, part := range strings.Split(string(b), "<testsuite ")[1:] {
		attrs := strings.Fields(part)
		counts = append(counts, strings.Join(attrs[:min(len(attrs), 4)], " "))
	}
	return strings.Join(counts, "\n")
}

// An exploration drawn as two shards merges into one summary: the cases
// added up, the exit status the cases call for. A failure found by any
// shard is in the merged summary with its shrunk script; a missing shard
// is refused.
func TestExplorationShardsMerge(t *testing.T) {
	t.Parallel() // runs on clusters of its own, mostly waiting
	if testing.Short() {
		t.Skip("draws four cases on a real cluster")
	}
	dir := t.TempDir()
	var files []string
	for _, k := range []string{"1/2", "2/2"} {
		out := filepath.Join(dir, "shard-"+k[:1]+".txt")
		code, stdout, stderr := locklab(t, t.Context(), "explore", "--lock", "queue", "--cases", "4", "--steps", "3",
			"--faults", "pause,expire", "--shard", k, "--out", out)
		require.NotEqual(t, exitUsage, code, stderr)
		assert.Contains(t, stdout, "shard "+k)
		files = append(files, exploreResults(out))
	}
	merged := filepath.Join(dir, "merged")
	code, stdout, stderr := locklab(t, t.Context(), append([]string{"merge", "--out", merged}, files...)...)
	require.Empty(t, stderr)
	var sum struct{ Cases, Faulted int }
	b, err := os.ReadFile(filepath.Join(merged, "results.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sum))
	assert.Equal(t, 4, sum.Cases, "the two shards drew the four cases")
	if sum.Faulted == 0 {
		assert.Equal(t, exitUndecided, code)
	} else {
		assert.Equal(t, exitOK, code, stdout)
	}

	// A failure in shard 2, as a shard writes it.
	fail := strings.Replace(string(mustRead(t, files[1])), `"complete": true`,
		`"complete": true, "failures": [{"case": 4, "message": "property \"safe\" does not hold", "actions": ["pause-write c1"], "script": "found.txt"}]`, 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "failing.results.json"), []byte(fail), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "found.txt"), []byte("# the shrunk script\n"), 0o644))
	code, stdout, stderr = locklab(t, t.Context(), "merge", "--out", filepath.Join(dir, "m2"), files[0], filepath.Join(dir, "failing.results.json"))
	require.Empty(t, stderr)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stdout, "## FAIL at case 4")
	assert.FileExists(t, filepath.Join(dir, "m2", "found.txt"))

	code, _, stderr = locklab(t, t.Context(), "merge", "--out", filepath.Join(dir, "m3"), files[1])
	assert.Equal(t, exitUsage, code)
	oneLine(t, stderr, "shards missing: 1/2 (draw them with --shard K/2")
}

func mustRead(t *testing.T, file string) []byte {
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	return b
}
