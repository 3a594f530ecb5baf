package explore_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/internal/leaks"
	"github.com/locklab/locklab/lock/etcdctl"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/script"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/internal/testsize"
	"github.com/locklab/locklab/scenarios"
	_ "github.com/locklab/locklab/scenarios/etcdstore" // the drawn cases replayed as runs on etcd
)

func TestMain(m *testing.M) {
	etcdctl.Serve()       // the etcdctl lock's etcdctl is this binary
	testsize.Alone()      // its explorations run lessons: not beside the other lesson packages
	testsize.WaitBound(4) // each exploration on its own cluster, mostly waiting
	goleak.VerifyTestMain(m, leaks.Known()...)
}

// casesPerProperty is each property test's budget: small by default (5),
// so go test ./... stays quick; LOCKLAB_LONG=1 makes it 30, and
// LOCKLAB_EXPLORE_CASES sets it (see docs/explore.md).
func casesPerProperty(t *testing.T) int {
	t.Helper()
	v := os.Getenv("LOCKLAB_EXPLORE_CASES")
	if v == "" {
		return testsize.Pick(t, 5, 30, "cases")
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "LOCKLAB_EXPLORE_CASES")
	return n
}

func startCluster(t *testing.T) *cluster.Cluster {
	t.Helper()
	c, err := cluster.Start(t.Context(), cluster.Config{Members: 3})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// holds explores the property against a correct lock with every fault
// kind, one cluster for the test: no case may break it.
func holds(t *testing.T, lockName string, p explore.Property, seed uint64) {
	t.Helper()
	t.Parallel() // each on its own cluster, mostly waiting for leases
	f, err := etcdlock.Lookup(lockName)
	require.NoError(t, err)
	res, err := explore.Run(t.Context(), explore.Config{Cluster: startCluster(t), Lock: lockName, Factory: f,
		Property: p, Cases: casesPerProperty(t), Seed: seed, Progress: testWriter{t}})
	require.NoError(t, err)
	if res.Failed != nil {
		path := filepath.Join(t.ArtifactDir(), "failing.txt")
		_ = os.WriteFile(path, []byte(res.Failed.Script), 0o644)
		t.Fatalf("%s broke %s: %s\nthe shrunk script (%s):\n%s", lockName, p.Name, res.Message, path, res.Failed.Script)
	}
	require.Positive(t, res.Faulted, "no case drew a fault: the property was never put to the test")
	t.Logf("%d cases held, %d with a fault (%d scripts ran) in %v", res.Cases, res.Faulted, res.Runs, res.Elapsed)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestExploreCounterLinearizes(t *testing.T) { holds(t, "queue", explore.CounterLinearizes, 1) }

func TestExploreTokensGrow(t *testing.T) { holds(t, "etcd-mutex", explore.TokensGrow, 2) }

func TestExploreNoStaleWriteAccepted(t *testing.T) { holds(t, "queue", explore.NoStaleWrite, 3) }

func TestExploreNoExpiredWaiterGranted(t *testing.T) {
	holds(t, "etcd-mutex", explore.NoExpiredWaiterGranted, 4)
}

func TestExploreGrantsValid(t *testing.T) { holds(t, "queue", explore.GrantsValid, 5) }

func TestExploreProgressAfterHeal(t *testing.T) { holds(t, "etcd-mutex", explore.ProgressAfterHeal, 6) }

// mustFind explores a property that must break, and returns the shrunk
// case; it fails the test if the exploration finds nothing.
func mustFind(t *testing.T, cfg explore.Config) *explore.Case {
	t.Helper()
	t.Parallel() // each on its own cluster, mostly waiting for leases
	cfg.Cluster, cfg.Progress = startCluster(t), testWriter{t}
	res, err := explore.Run(t.Context(), cfg)
	require.NoError(t, err)
	require.NotNil(t, res.Failed, "%d cases against %s found no break of %s: the exploration has stopped finding it", res.Cases, cfg.Lock, cfg.Property.Name)
	path := filepath.Join(t.ArtifactDir(), "shrunk.txt")
	require.NoError(t, os.WriteFile(path, []byte(res.Failed.Script), 0o644))
	t.Logf("found at case %d, shrunk to %d actions (%d steps) after %d scripts, %v: %s\n%s",
		res.Cases, len(res.Failed.Actions), res.Failed.Steps(), res.Runs, res.Elapsed, path, res.Failed.Script)
	return res.Failed
}

// On an unfenced store, with pauses allowed, exploration must find the
// paused holder's lost update and shrink it to the lesson's few actions.
func TestExploreFindsPausedDoubleHolder(t *testing.T) {
	c := mustFind(t, explore.Config{Lock: "queue", Factory: etcdlock.NewQueue, Property: explore.Safe("unfenced"),
		Walk: script.WalkOptions{Faults: []string{script.WalkPause}}, Cases: 60, Seed: 1})
	assert.Contains(t, c.Script, "pause ")
	assert.Contains(t, c.Script, "unfenced: FAIL")
	assert.Contains(t, c.Script, "fenced: PASS")
	// acquire, pause, wait out the lease, the next holder's grant and
	// write, resume: six actions, give or take one the shrinker kept.
	assert.LessOrEqual(t, len(c.Actions), 7, "shrunk to %v", c.Actions)
}

// A known-bad lock is caught by the property it breaks: etcd-11456 grants
// a waiter whose lease ended while it waited.
func TestExploreCatchesExpiredWaiterGrant(t *testing.T) {
	bad, ok := etcdlock.LookupRegression("etcd-11456")
	require.True(t, ok)
	c := mustFind(t, explore.Config{Lock: bad.Name, Factory: bad.Factory, Property: explore.NoExpiredWaiterGranted,
		Walk: script.WalkOptions{Faults: []string{script.WalkExpire}}, Cases: 60, Seed: 1})
	assert.Contains(t, c.Script, "expire ")
	assert.LessOrEqual(t, len(c.Actions), 5, "shrunk to %v", c.Actions)
}

// etcd-5199 leaves the key of an acquire whose answer was lost under its
// live session: exploration with lost acquires finds the lock never
// granting again, and shrinks the case to the one lost acquire.
func TestExploreCatchesALostAcquireWedge(t *testing.T) {
	bad, ok := etcdlock.LookupRegression("etcd-5199")
	require.True(t, ok)
	c := mustFind(t, explore.Config{Lock: bad.Name, Factory: bad.Factory, Property: explore.ProgressAfterHeal,
		Walk: script.WalkOptions{Faults: []string{script.WalkLostAcquire}}, Cases: 20, Seed: 1})
	assert.Contains(t, c.Script, "answer=lost")
	assert.LessOrEqual(t, len(c.Actions), 2, "shrunk to %v", c.Actions)
}

// renew-gives-up stops renewing its lease at the first keep-alive left
// unanswered for a quarter of a TTL: exploration with blips, on 3 s leases
// (where a blip holds the answers from the holder's next keep-alive),
// finds its holder's lease lapsing under it at the first blip it draws.
func TestExploreCatchesARenewalThatGivesUp(t *testing.T) {
	bad, ok := etcdlock.LookupRegression("renew-gives-up")
	require.True(t, ok)
	c := mustFind(t, explore.Config{Lock: bad.Name, Factory: bad.Factory, Property: explore.GrantsValid,
		Walk: script.WalkOptions{Faults: []string{script.WalkBlip}, TTL: 3}, Cases: 10, Seed: 1,
		ShrinkTime: time.Duration(testsize.Pick(t, 10, 30, "seconds of shrinking")) * time.Second})
	assert.Contains(t, c.Script, "hold-answers c")
	assert.Contains(t, c.Script, " for=1.2s")
}

// stale-reentry takes a key that names its client, read from the client's
// own member alone, for a grant it still holds: exploration with isolated
// members finds a cut-off holder told it holds the lock again, on the
// lease the rest of the cluster had ended.
func TestExploreCatchesAStaleReentry(t *testing.T) {
	bad, ok := etcdlock.LookupRegression("stale-reentry")
	require.True(t, ok)
	c := mustFind(t, explore.Config{Lock: bad.Name, Factory: bad.Factory, Property: explore.GrantsValid,
		Walk: script.WalkOptions{Faults: []string{script.WalkIsolate}}, Cases: 20, Seed: 1})
	assert.Contains(t, c.Script, "isolate member=")
	assert.LessOrEqual(t, len(c.Actions), 3, "shrunk to %v", c.Actions)
}

// renew-late renews a TTL after the last keep-alive's answer: exploration
// with slow links, on 3 s leases, finds its holder's lease ending while it
// works.
func TestExploreCatchesALateRenewal(t *testing.T) {
	bad, ok := etcdlock.LookupRegression("renew-late")
	require.True(t, ok)
	c := mustFind(t, explore.Config{Lock: bad.Name, Factory: bad.Factory, Property: explore.GrantsValid,
		Walk: script.WalkOptions{Faults: []string{script.WalkSlow}, TTL: 3}, Cases: 10, Seed: 1,
		ShrinkTime: time.Duration(testsize.Pick(t, 10, 30, "seconds of shrinking")) * time.Second})
	assert.Contains(t, c.Script, "delay c")
	assert.Contains(t, c.Script, " by=400ms")
}

// A shrunk script runs again as a scenario file with the verdicts it
// recorded: the run is deterministic.
func TestShrunkScriptReproduces(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile("testdata/paused-double-holder.txt")
	require.NoError(t, err)
	s, err := scenarios.FromScript("paused-double-holder", "testdata/paused-double-holder.txt", string(text))
	require.NoError(t, err)
	for range 2 {
		sum, err := scenarios.Run(context.Background(), scenarios.Config{Extra: []scenarios.Scenario{s},
			Scenarios: []string{s.Name}, Locks: []string{"queue"}, Resources: resource.Names(), Seed: 1, Runs: 1})
		require.NoError(t, err)
		require.Len(t, sum.Results, 3)
		for _, r := range sum.Results {
			assert.True(t, r.Matches, "%s: %s (expected %s) %s", r.Resource, r.Verdict, r.Expected, r.Error)
		}
	}
}

// With longer leases (locktest.LeaseScale, explore --ttl) a drawn script says so
// in its setup, its case runs to its closing grant, and it runs again as a
// scenario file with the verdicts it recorded.
func TestExploreWithLongerLeases(t *testing.T) {
	t.Parallel()
	cfg := explore.Config{Cluster: startCluster(t), Lock: "queue", Factory: etcdlock.NewQueue, Property: explore.Safe("fenced"),
		Walk: script.WalkOptions{TTL: 2, Faults: []string{script.WalkExpire}}}
	c, err := explore.RunCase(t.Context(), cfg, []int{0, 4, 27, 7, 10}) // acquire c1, wait c2, expire c1, await c2, cs c2
	require.NoError(t, err)
	t.Logf("%v\n%s", c.Actions, c.Script)
	assert.Contains(t, c.Script, "setup members=3 ttl=2\n")
	assert.Positive(t, c.Faults, "the case drew no fault: %v", c.Actions)
	assert.True(t, c.Progressed, "the lock granted again after the faults")
	assert.Equal(t, "PASS", string(c.Reports["fenced"].Result()))

	s, err := scenarios.FromScript("drawn", "drawn.txt", c.Script)
	require.NoError(t, err)
	assert.Equal(t, 2, s.TTL)
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Extra: []scenarios.Scenario{s},
		Scenarios: []string{s.Name}, Locks: []string{"queue"}, Resources: resource.Names(), Seed: 1, Runs: 1})
	require.NoError(t, err)
	require.Len(t, sum.Results, 3)
	for _, r := range sum.Results {
		assert.True(t, r.Matches, "%s: %s (expected %s) %s", r.Resource, r.Verdict, r.Expected, r.Error)
	}
}

// A user's cluster is not the lab's to partition: an exploration there
// never draws an isolated member, and one asked for nothing else is refused.
func TestExploreDrawsNoIsolationOnAnExternalCluster(t *testing.T) {
	c := startCluster(t)
	ext, err := cluster.Connect(t.Context(), cluster.External{Endpoints: c.Endpoints()})
	require.NoError(t, err)
	defer ext.Close()
	_, err = explore.Run(t.Context(), explore.Config{Cluster: ext, Lock: "queue", Factory: etcdlock.NewQueue,
		Property: explore.GrantsValid, Walk: script.WalkOptions{Faults: []string{script.WalkIsolate}}})
	assert.ErrorContains(t, err, "the lab cannot do to an external cluster")
}
