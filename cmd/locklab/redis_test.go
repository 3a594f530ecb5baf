package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/cluster/zkd"
)

// explore draws scripts for a Redis lock on the lab's Redis: it finds the
// paused double holder of redis-setnx on the unfenced store, shrinks it,
// and the script it writes runs again on Redis with the verdicts it found.
// What Redis cannot do is refused by name.
func TestExploreARedisLock(t *testing.T) {
	t.Parallel() // mostly waits for keys to expire
	if _, err := redisd.Find(); err != nil {
		t.Skipf("explore on Redis: %v", err)
	}
	script := filepath.Join(t.TempDir(), "found.txt")
	code, stdout, stderr := locklab(t, t.Context(), "explore", "--lock", "redis-setnx", "--resource", "unfenced",
		"--faults", "pause", "--cases", "60", "--shrink-time", "5s", "--out", script)
	require.Equal(t, exitMismatch, code, stdout+stderr)
	assert.Contains(t, stdout, "FAIL at case")
	assert.Contains(t, stdout, "run it again: locklab run --script "+script+" --lock redis-setnx")
	code, stdout, stderr = locklab(t, t.Context(), "run", "--script", script, "--lock", "redis-setnx", "--out", t.TempDir())
	require.Equal(t, exitOK, code, stdout+stderr)
	assert.Regexp(t, `\s+FAIL\*?\s+PASS\*?\s+PASS\*?\s+redis-setnx\n`, stdout, "the found script's row (unfenced, fenced, redis-guarded): documented outcomes, no !")

	for _, tc := range []struct{ args []string }{
		{[]string{"--lock", "redis-setnx", "--faults", "expire"}},
		{[]string{"--lock", "redlock", "--resource", "fenced"}},
		{[]string{"--lock", "redis-setnx", "--resource", "etcd-guarded"}},
		{[]string{"--lock", "redis-setnx", "--members", "5"}},
		{[]string{"--lock", "redis-setnx", "--endpoints", "http://127.0.0.1:1"}},
	} {
		code, _, stderr = locklab(t, t.Context(), append([]string{"explore"}, tc.args...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, stderr)
	}
}

// A lock run as a process on Redis (--store redis) replays on Redis: its
// schedule names the store. redis-py's Lock, as examples/locks adapts it.
func TestReplayARedisProcessLock(t *testing.T) {
	t.Parallel()
	if _, err := redisd.Find(); err != nil {
		t.Skipf("replay on Redis: %v", err)
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import redis").Run(); err != nil {
		t.Skipf("replay on Redis: Debian's python3-redis is not installed (.ci/run installs it): %v", err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "examples", "locks", "redis-py", "lock.py"))
	require.NoError(t, err)
	name := "exec:/usr/bin/python3 " + script
	out := t.TempDir()
	code, stdout, stderr := locklab(t, t.Context(), "run", "--store", "redis", "--lock", name, "--scenario", "paused-holder",
		"--resource", "unfenced", "--out", out)
	require.Equal(t, exitOK, code, stdout+stderr)
	schedules, err := filepath.Glob(filepath.Join(out, "paused-holder", "*", "1", "schedule.json"))
	require.NoError(t, err)
	require.Len(t, schedules, 1)
	code, stdout, stderr = locklab(t, t.Context(), "replay", "--allow-exec", "--out", t.TempDir(), filepath.Dir(schedules[0]))
	require.Equal(t, exitOK, code, stdout+stderr)
	assert.Contains(t, stdout, "unfenced      recorded FAIL    replayed FAIL    same")
}

// A user's Redis lock run as a process is measured on Redis (bench --store
// redis): redis-py's Lock, as examples/locks adapts it. Its grant's key is
// the bench's, never a name made of the command (which holds spaces).
func TestBenchARedisProcessLock(t *testing.T) {
	t.Parallel()
	if _, err := redisd.Find(); err != nil {
		t.Skipf("bench on Redis: %v", err)
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import redis").Run(); err != nil {
		t.Skipf("bench on Redis: Debian's python3-redis is not installed (.ci/run installs it): %v", err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "examples", "locks", "redis-py", "lock.py"))
	require.NoError(t, err)
	code, stdout, stderr := locklab(t, t.Context(), "bench", "--store", "redis", "--lock", "exec:/usr/bin/python3 "+script,
		"--clients", "2", "--duration", "3s")
	require.Equal(t, exitOK, code, stdout+stderr)
	assert.Contains(t, stdout, "hand-off floor on a Redis primary")
	assert.Regexp(t, `lock.py +2 +\d+`, stdout)
	code, _, stderr = locklab(t, t.Context(), "bench", "--store", "redis", "--lock", "queue")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--store redis: it names the store of exec:COMMAND locks, and --lock names none")
}

// bench measures every store's locks in one table, each on servers of its
// store, and records each store's hand-off floor once.
func TestBenchEveryStore(t *testing.T) {
	t.Parallel() // servers of its own, mostly waiting
	if _, err := redisd.Find(); err != nil {
		t.Skipf("bench on Redis: %v", err)
	}
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("bench on ZooKeeper: %v", err)
	}
	out := t.TempDir()
	// Long enough for a ZooKeeper session and its first grant on a busy
	// machine (the table, not the speed, is what this proves): at 300 ms a
	// loaded run measured no zk-lock grant at all.
	code, stdout, stderr := locklab(t, t.Context(), "bench", "--lock", "zk-lock,redis-setnx,queue", "--clients", "2",
		"--duration", "2s", "--out", out)
	require.Equal(t, exitOK, code, stdout+stderr)
	var report benchReport
	b, err := os.ReadFile(filepath.Join(out, "bench.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &report))
	var locks []string
	for _, r := range report.Results {
		assert.Empty(t, r.Error, r.Lock)
		locks = append(locks, r.Lock)
	}
	assert.Equal(t, []string{"zk-lock", "redis-setnx", "queue"}, locks)
	var stores []string
	for _, f := range report.StoreFloors {
		assert.Positive(t, f.Floor.P50, f.On)
		stores = append(stores, f.Store)
	}
	assert.Equal(t, []string{"zookeeper", "redis"}, stores)
	assert.Contains(t, stdout, "hand-off floor on a ZooKeeper ensemble of 3")
	assert.Contains(t, stdout, "hand-off floor on a Redis primary")
}
