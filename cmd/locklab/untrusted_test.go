package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oneRun is a small whole run's directory, as a shard of a campaign
// (unsplit) is: one configuration, its histories and schedule.
func oneRun(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := locklab(t, t.Context(), "run", "--scenario", "contention", "--lock", "queue", "--out", dir)
	require.Equal(t, exitOK, code, stderr)
	return dir
}

// copyRun copies a run's directory to a new one, for a test to tamper with.
func copyRun(t *testing.T, dir string) string {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "shard")
	require.NoError(t, os.CopyFS(cp, os.DirFS(dir)))
	return cp
}

// A shard is a CI artifact anyone who opens a pull request can shape:
// merge copies regular files only and follows no link, refuses names that
// would become paths outside --out or markup, and writes nothing when it
// refuses — one line, exit status 2.
func TestMergeTrustsNothingAShardSays(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("links and FIFOs are made here as Unix makes them")
	}
	run := oneRun(t)
	link := copyRun(t, run)
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(link, "contention", "queue", "1", "x.txt")))
	linkedDir := copyRun(t, run)
	require.NoError(t, os.Symlink(filepath.Join(run, "contention"), filepath.Join(linkedDir, "elsewhere")))
	fifo := copyRun(t, run)
	require.NoError(t, mkfifo(filepath.Join(fifo, "contention", "queue", "1", "p")))
	rename := func(from, to string) string {
		d := copyRun(t, run)
		file := filepath.Join(d, "results.json")
		b := mustRead(t, file)
		require.Contains(t, string(b), from)
		require.NoError(t, os.WriteFile(file, []byte(strings.ReplaceAll(string(b), from, to)), 0o644))
		return d
	}
	for _, tc := range []struct {
		name, shard string
		want        []string
	}{
		{"a link to a file", link, []string{"x.txt: a symbolic link; a shard holds regular files and directories only"}},
		{"a link to a directory", linkedDir, []string{"elsewhere: a symbolic link"}},
		{"a FIFO", fifo, []string{"p: a FIFO"}},
		{"a scenario named as a path", rename(`"contention"`, `"../s2/payload"`), []string{"results.json: campaign: scenario \"../s2/payload\""}},
		{"a lock named with markup", rename(`"queue"`, `"<img src=x>"`), []string{"results.json: campaign: lock \"<img src=x>\""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "m")
			code, _, stderr := locklab(t, t.Context(), "merge", "--out", out, tc.shard)
			assert.Equal(t, exitUsage, code)
			oneLine(t, stderr, tc.want...)
			assert.NoDirExists(t, out, "nothing written")
		})
	}
	// The untampered run merges, and merges again into its own output.
	out := filepath.Join(t.TempDir(), "m")
	for range 2 {
		code, _, stderr := locklab(t, t.Context(), "merge", "--out", out, run)
		assert.Equal(t, exitOK, code, stderr)
	}
}

// An exploration's results file names its failure's script: a name that is
// no file beside it (a path) is refused, nothing copied.
func TestMergeRefusesAnExplorationsScriptOutsideIt(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "x.results.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"locklab_version":"0","campaign":{"lock":"queue"},"complete":true,`+
		`"failures":[{"case":1,"message":"m","script":"../../etc/passwd"}]}`), 0o644))
	out := filepath.Join(dir, "m")
	code, _, stderr := locklab(t, t.Context(), "merge", "--out", out, file)
	assert.Equal(t, exitUsage, code)
	oneLine(t, stderr, `a failure's script "../../etc/passwd" is not the name of a scenario file beside it`)
	assert.NoDirExists(t, out)
}

// --out never mixes two reports: a directory holding anything but an
// earlier report of the same command is refused, its files left as they
// were; the same command's earlier report is replaced whole.
func TestOutNeverMixesReports(t *testing.T) {
	run := oneRun(t)
	foreign := t.TempDir()
	keep := filepath.Join(foreign, "keep.txt")
	require.NoError(t, os.WriteFile(keep, []byte("mine"), 0o644))
	history := filepath.Join(run, "contention", "queue", "1", "fenced.history.jsonl")
	for _, args := range [][]string{
		{"run", "--scenario", "contention", "--lock", "queue", "--out", foreign},
		{"check", history, "--out", foreign},
		{"merge", "--out", foreign, run},
		{"replay", filepath.Dir(history), "--out", foreign},
	} {
		code, _, stderr := locklab(t, t.Context(), args...)
		assert.Equal(t, exitUsage, code, "%v", args)
		oneLine(t, stderr, "--out "+foreign+": the directory holds files that are no locklab report", "nothing was written")
	}
	assert.Equal(t, "mine", string(mustRead(t, keep)))
	entries, err := os.ReadDir(foreign)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "nothing was written beside it")

	// Another command's report is refused too.
	code, _, stderr := locklab(t, t.Context(), "check", history, "--out", run)
	assert.Equal(t, exitUsage, code)
	oneLine(t, stderr, "the directory holds a report of locklab run")

	// The same command again: the old report's files are gone, not mixed.
	checked := filepath.Join(t.TempDir(), "c")
	code, _, stderr = locklab(t, t.Context(), "check", history, "--out", checked)
	require.Equal(t, exitOK, code, stderr)
	stale := filepath.Join(checked, "stale.porcupine.html")
	require.NoError(t, os.WriteFile(stale, nil, 0o644))
	code, _, stderr = locklab(t, t.Context(), "check", filepath.Join(checked, "fenced.history.jsonl"), "--out", checked)
	require.Equal(t, exitOK, code, stderr)
	assert.NoFileExists(t, stale, "the earlier report's files went")
	assert.FileExists(t, filepath.Join(checked, "fenced.history.jsonl"), "the history checked from the old report was read first")
}

// A schedule whose step is no command of the scenario language is bad
// input, refused before anything runs.
func TestReplayRefusesAScheduleItCannotRun(t *testing.T) {
	run := copyRun(t, oneRun(t))
	schedule := filepath.Join(run, "contention", "queue", "1", "schedule.json")
	require.NoError(t, os.WriteFile(schedule, []byte(`{"scenario":"contention","seed":1,"steps":["frobnicate c1"]}`), 0o644))
	out := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := locklab(t, t.Context(), "replay", filepath.Dir(schedule), "--out", out)
	assert.Equal(t, exitUsage, code)
	oneLine(t, stderr, "schedule.json: step 1: unknown command \"frobnicate\"", "nothing was run")
	assert.Empty(t, stdout)
	assert.NoDirExists(t, out)
}
