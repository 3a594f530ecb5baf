package scenarios

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/run"
)

// failAfter is a sink that takes n events and then fails, like a disk that
// fills up during a run.
type failAfter struct {
	next history.Sink
	n    *atomic.Int64
}

var errDiskFull = errors.New("no space left on device")

func (f failAfter) Write(e history.Event) error {
	if f.n.Add(-1) < 0 {
		return errDiskFull
	}
	return f.next.Write(e)
}

// A run whose history could not be recorded in full is an ERROR, whatever
// the checkers would say about the truncated part: the failure reaches the
// result through the whole runner, not only Env.Err.
func TestFailingHistorySinkMakesTheRunAnError(t *testing.T) {
	t.Parallel() // a cluster of its own: beside the others
	sum, err := Run(t.Context(), Config{
		Scenarios: []string{"paused-holder"}, Locks: []string{"etcd-mutex"}, Resources: []string{"fenced"},
		Seed: 1, Out: t.TempDir(),
		wrapSink: func(s history.Sink) history.Sink {
			n := &atomic.Int64{}
			n.Store(5)
			return failAfter{next: s, n: n}
		},
	})
	require.NoError(t, err)
	require.Len(t, sum.Results, 1)
	r := sum.Results[0]
	assert.Equal(t, models.Error, r.Verdict)
	assert.Contains(t, r.Error, errDiskFull.Error())
	assert.Contains(t, r.Error, "recording the fenced history")
	assert.False(t, r.Matches, "an ERROR matches no expectation")
	assert.Equal(t, 1, sum.ExitCode())
}

// A drawn script whose fault could not be applied did not test what it
// drew: the run is an ERROR that says which step, not a PASS beside a note.
func TestRandomFaultThatDidNotApplyIsAnError(t *testing.T) {
	t.Parallel() // a cluster of its own: beside the others
	plan := Plan{Scenario: "random", Seed: 1, Steps: []string{
		"client c1 member=m1", "acquire c1", "cut c9", "release c1", "acquire c1", "cs c1", "release c1",
	}}
	sum, err := Run(t.Context(), Config{
		Scenarios: []string{"random"}, Locks: []string{"etcd-mutex"}, Resources: []string{"fenced"},
		Seed: 1, Replay: &plan,
	})
	require.NoError(t, err)
	require.Len(t, sum.Results, 1)
	r := sum.Results[0]
	assert.Equal(t, models.Error, r.Verdict)
	assert.Contains(t, r.Error, "did not run as drawn")
	assert.Contains(t, r.Error, "step 3: cut c9")
}

// A schedule whose effect is prevented — the minority partition healed at
// once, before any lease could lapse — comes out ERROR (vacuous), not PASS,
// though every safety check passes on its history.
func TestPreventedEffectIsAnError(t *testing.T) {
	t.Parallel() // a cluster of its own: beside the others
	ctx := t.Context()
	c, err := cluster.Start(ctx, cluster.Config{Members: 3})
	require.NoError(t, err)
	defer c.Close()
	s, err := Lookup("minority-partition")
	require.NoError(t, err)
	s.exec = contendUnder(3, faults.IsolateMember, run.Phases{Before: 4, After: 12})
	cfg := Config{Resources: []string{"fenced"}}
	rs := runOne(ctx, cfg, c, job{s: s, lock: "etcd-mutex", factory: etcdlock.Builtin()["etcd-mutex"], seed: 1})
	require.Len(t, rs, 1)
	r := rs[0]
	for _, v := range r.Checks {
		assert.NotEqual(t, models.Fail, v.Result, "%s: %s", v.Check, v.Explanation)
	}
	assert.Equal(t, models.Error, r.Verdict)
	assert.False(t, r.Matches)
	if r.Environmental() != "" {
		// The machine lapsed a lease beside the package's other clusters:
		// an ERROR all the same, for the environment's reason, never a PASS.
		t.Logf("the environment's ERROR, not the schedule's: %s", r.Error)
		return
	}
	assert.Contains(t, r.Error, "vacuous schedule")
	assert.Contains(t, r.Error, "kept its lease")
}

// A configuration whose environment lapsed a lease and whose judgement did
// not match runs again, at most Attempts times; the last result stands and
// names the earlier ones; the last runs with leases twice as long. A lapse
// that changed nothing, or a mismatch with no lapse (the lock's own), is
// not run again.
func TestAttemptsRunAgainOnlyWhatTheEnvironmentSpoiled(t *testing.T) {
	lapse := models.Verdict{Check: "environment", Result: models.Error,
		Explanation: "The environment let a renewed lease lapse: c2's lease ended 3ms into its hold. The machine was too slow."}
	spoiled := Result{Resource: "unfenced", Verdict: models.Error, Checks: []models.Verdict{lapse}}
	clean := Result{Resource: "unfenced", Verdict: models.Pass, Matches: true}
	lockFail := Result{Resource: "unfenced", Verdict: models.Fail}
	lapsedButMatched := Result{Resource: "unfenced", Verdict: models.Pass, Matches: true, Checks: []models.Verdict{lapse}}
	for _, tc := range []struct {
		name  string
		runs  []Result // one per attempt, in turn
		calls int
		want  Result
	}{
		{"spoiled, then clean", []Result{spoiled, clean}, 2, clean},
		{"spoiled every time", []Result{spoiled, spoiled, spoiled, clean}, Attempts, spoiled},
		{"the lock's own failure", []Result{lockFail, clean}, 1, lockFail},
		{"a lapse that changed nothing", []Result{lapsedButMatched, clean}, 1, lapsedButMatched},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			var scales []int
			got := attempts(t.Context(), 1, func(ttl int) []Result {
				calls++
				scales = append(scales, ttl)
				return []Result{tc.runs[calls-1]}
			})
			assert.Equal(t, tc.calls, calls)
			require.Len(t, got, 1)
			if calls == Attempts {
				assert.Equal(t, []int{1, 1, 2}, scales, "the last attempt gives leases twice as long")
				assert.Equal(t, 2, got[0].LeaseScale)
			} else {
				assert.Zero(t, got[0].LeaseScale)
				assert.NotContains(t, scales, 2)
			}
			assert.Equal(t, tc.want.Verdict, got[0].Verdict)
			require.Len(t, got[0].Retried, calls-1)
			for _, r := range got[0].Retried {
				assert.Contains(t, r, "unfenced ERROR — The environment let a renewed lease lapse: c2's lease ended 3ms into its hold")
			}
		})
	}
}

// Another store's lessons are left out of a run of the whole catalog, a
// line per lesson naming the locks; the rest runs.
func TestAnotherStoresLessonsAreLeftOutAndSaid(t *testing.T) {
	cfg := Config{Scenarios: Names(), Locks: []string{"etcd-mutex", "queue"}, Resources: []string{"fenced"}, Seed: 1}
	jobs, leftOut, err := cfg.jobs()
	require.NoError(t, err)
	assert.Equal(t, []string{
		"lost-request is a lesson for a ZooKeeper ensemble, not for a lock on etcd, not run for etcd-mutex, queue",
		"leader-killed is a lesson for a ZooKeeper ensemble, not for a lock on etcd, not run for etcd-mutex, queue",
		"server-isolated is a lesson for a ZooKeeper ensemble, not for a lock on etcd, not run for etcd-mutex, queue",
		"failover is a lesson for one Redis primary, not for a lock on etcd, not run for etcd-mutex, queue",
		"redlock-paused is a lesson for Redlock's independent masters, not for a lock on etcd, not run for etcd-mutex, queue",
	}, leftOut)
	for _, j := range jobs {
		assert.Empty(t, j.s.NotFor(EtcdLock), "%s ran for %s", j.s.Name, j.lock)
	}
	assert.Len(t, jobs, 2*(len(Names())-5))
}

// Which lessons are for which kind of lock: every lesson is one for some
// kind, and a lesson shared by the stores for etcd, one Redis primary and
// ZooKeeper.
func TestEveryLessonIsForSomeKindOfLock(t *testing.T) {
	for _, s := range Catalog() {
		n := 0
		for _, k := range []LockKind{EtcdLock, RedisLock, RedlockLock, ZooKeeperLock} {
			if s.NotFor(k) == "" {
				n++
			}
		}
		assert.Positive(t, n, "%s is a lesson for no lock", s.Name)
		if slices.Equal(s.Stores, Shared) {
			assert.Empty(t, s.NotFor(EtcdLock)+s.NotFor(RedisLock)+s.NotFor(ZooKeeperLock), s.Name)
			assert.NotEmpty(t, s.NotFor(RedlockLock), s.Name)
		}
	}
}

// A lesson left out for locks of two kinds says each kind's reason.
func TestALessonLeftOutForTwoKindsSaysBoth(t *testing.T) {
	Register(testBackend{})
	defer func() {
		backendsMu.Lock()
		defer backendsMu.Unlock()
		backends = backends[:len(backends)-1]
	}()
	cfg := Config{Scenarios: []string{"failover"}, Locks: []string{"queue", "test-redlock", "test-setnx"}, Resources: []string{"fenced"}, Seed: 1}
	jobs, leftOut, err := cfg.jobs()
	require.NoError(t, err)
	assert.Len(t, jobs, 1, "failover runs for the lock on one Redis primary")
	assert.Equal(t, []string{
		"failover is a lesson for one Redis primary, not for a lock on etcd, not run for queue",
		"failover is a lesson for one Redis primary, not for a lock on Redlock's independent masters, not run for test-redlock",
	}, leftOut)
}

// testBackend is a store with a lock of each Redis kind, for jobs alone.
type testBackend struct{}

func (testBackend) Lock(name string) (BackendLock, bool) {
	switch name {
	case "test-redlock":
		return BackendLock{Kind: RedlockLock}, true
	case "test-setnx":
		return BackendLock{Kind: RedisLock}, true
	}
	return BackendLock{}, false
}
func (testBackend) Name() string                     { return "test" }
func (testBackend) Exec(string) (BackendLock, error) { return BackendLock{Kind: RedisLock}, nil }
func (testBackend) Regressions() []lock.Regression   { return nil }
func (testBackend) Names() []string                  { return nil }
func (testBackend) About() (on, needs string)        { return "", "" }
func (testBackend) Locks() []lock.Description        { return nil }
func (testBackend) Adopt(any) (BackendLock, error)   { return BackendLock{}, errors.New("no") }
func (testBackend) Connect(context.Context, []string) (Servers, error) {
	return nil, errors.New("no servers")
}
