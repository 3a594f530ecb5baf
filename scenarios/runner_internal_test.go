package scenarios

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/run/redisrun"
	"github.com/locklab/locklab/run/zkrun"
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
	l, ok := backendLock("etcd-mutex")
	require.True(t, ok, "scenarios/etcdstore is linked into the test")
	cfg := Config{Resources: []string{"fenced"}, servers: runServers{pools: map[string][]Servers{l.Kind.Name: {c}}}}
	rs := runOne(ctx, cfg, 0, job{s: s, lock: "etcd-mutex", l: l, seed: 1, resources: cfg.Resources})
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
		"split-acquire needs a store that can stop a client between the commands of its acquire (pause " +
			"at=in-acquire), which a lock on etcd cannot, not run for etcd-mutex, queue",
		"lost-request needs a store that can lose the request after an acquire's write (acquire next=lost), " +
			"which a lock on etcd cannot, not run for etcd-mutex, queue",
		"leader-killed needs a store that can tell when every client is served again after a member's fault " +
			"(wait-served), which a lock on etcd cannot, not run for etcd-mutex, queue",
		"server-isolated needs a store that can tell when every client is served again after a member's fault " +
			"(wait-served), which a lock on etcd cannot, not run for etcd-mutex, queue",
		"failover needs a store that can fail its primary over to a replica (failover), which a lock on etcd cannot, " +
			"not run for etcd-mutex, queue",
		"redlock-paused needs a store that can keep the lock on a majority of independent masters, which a lock on " +
			"etcd cannot, not run for etcd-mutex, queue",
		"server-restart needs a store that can keep what a server acknowledged across its restart; crash a server " +
			"and start it again at once (restart), which a lock on etcd cannot, not run for etcd-mutex, queue",
		"restart-empty needs a store that can restart a server with nothing it had; crash a server and start it " +
			"again at once (restart), which a lock on etcd cannot, not run for etcd-mutex, queue",
		"clock-jump needs a store that can end a lease by its server's wall clock; move a server's wall clock " +
			"forward or back (jump-clock), which a lock on etcd cannot, not run for etcd-mutex, queue",
		"redlock-clock needs a store that can keep the lock on a majority of independent masters; end a lease by its " +
			"server's wall clock; move a server's wall clock forward or back (jump-clock), which a lock on etcd " +
			"cannot, not run for etcd-mutex, queue",
		"redlock-restart needs a store that can keep the lock on a majority of independent masters; restart a server " +
			"with nothing it had; cut a client's link to one of its servers, its others left (cut member=); crash a " +
			"server and start it again at once (restart), which a lock on etcd cannot, not run for etcd-mutex, queue",
		"redlock-minority needs a store that can keep the lock on a majority of independent masters; cut a client's " +
			"link to one of its servers, its others left (cut member=), which a lock on etcd cannot, not run for " +
			"etcd-mutex, queue",
		"clock-jump-held needs a store that can time its leases on a monotonic clock; move a server's wall clock " +
			"forward or back (jump-clock), which a lock on etcd cannot, not run for etcd-mutex, queue",
		"clock-drift-held needs a store that can time its leases on a monotonic clock; move a server's wall clock " +
			"forward or back (jump-clock), which a lock on etcd cannot, not run for etcd-mutex, queue",
		"redlock-drift needs a store that can keep the lock on a majority of independent masters; end a lease by its " +
			"server's wall clock; move a server's wall clock forward or back (jump-clock), which a lock on etcd " +
			"cannot, not run for etcd-mutex, queue",
	}, leftOut)
	for _, j := range jobs {
		assert.Empty(t, j.s.NotFor(DefaultKind()), "%s ran for %s", j.s.Name, j.lock)
	}
	assert.Len(t, jobs, 2*(len(Names())-15))
}

// Which lessons are for which store follows from what each store can do
// and what each lesson needs: the table is the catalog's, as it was when
// each lesson listed its stores by hand.
func TestLessonsApplyByCapability(t *testing.T) {
	kinds := []StoreKind{DefaultKind(),
		{Name: "redis", Label: "one Redis primary", Can: redisrun.Capabilities(false)},
		{Name: "redlock", Label: "Redlock's independent masters", Can: redisrun.Capabilities(true)},
		{Name: "zookeeper", Label: "a ZooKeeper ensemble", Can: zkrun.Capabilities()},
	}
	every := "etcd redis zookeeper"
	anyShape := "etcd redis redlock zookeeper" // the lessons a lock on Redlock's masters runs too
	want := map[string]string{
		"paused-holder": every, "isolated-holder": every, "stale-release": anyShape, "gave-up": anyShape,
		"crashed-holder": anyShape, "contention": anyShape, "slow-holder": anyShape,
		"expire-while-waiting": "etcd", "retried-release": anyShape, "link-blip": "etcd redis zookeeper", "slow-link": "etcd redis zookeeper",
		"isolated-asks": "etcd", "leader-failover": "etcd", "minority-partition": "etcd", "member-restart": "etcd",
		"random":       "etcd",
		"lost-acquire": anyShape, "expire-while-waiting-lapse": "etcd zookeeper", "holder-told": every,
		"lost-request": "zookeeper", "leader-killed": "zookeeper", "server-isolated": "zookeeper",
		"failover": "redis", "redlock-paused": "redlock", "clock-jump": "redis", "redlock-clock": "redlock", "redlock-restart": "redlock", "redlock-drift": "redlock",
		"redlock-minority": "redlock",
		"clock-jump-held":  "zookeeper", "clock-drift-held": "zookeeper", "server-restart": "", "restart-empty": "redis",
		"split-release": anyShape, "split-acquire": "redis redlock zookeeper", "client-clock-back": every, "client-clock-slow": every,
	}
	require.Len(t, want, len(Catalog()))
	for _, s := range Catalog() {
		var on []string
		for _, k := range kinds {
			if s.For(k) {
				on = append(on, k.Name)
			} else {
				assert.Contains(t, s.NotFor(k), " cannot", "%s: the reason names what %s cannot do", s.Name, k.Name)
			}
		}
		assert.Equal(t, want[s.Name], strings.Join(on, " "), s.Name)
	}
	failover, err := Lookup("failover")
	require.NoError(t, err)
	assert.Equal(t, "failover needs a store that can fail its primary over to a replica (failover), which a lock on etcd cannot",
		failover.NotFor(DefaultKind()))
}

// A lesson left out for locks of two kinds says each kind's reason.
func TestALessonLeftOutForTwoKindsSaysBoth(t *testing.T) {
	defer backends.Reset(backends.All())
	Register(testBackend{})
	cfg := Config{Scenarios: []string{"failover"}, Locks: []string{"queue", "test-redlock", "test-setnx"}, Resources: []string{"fenced"}, Seed: 1}
	jobs, leftOut, err := cfg.jobs()
	require.NoError(t, err)
	assert.Len(t, jobs, 1, "failover runs for the lock on one Redis primary")
	assert.Equal(t, []string{
		"failover needs a store that can fail its primary over to a replica (failover), which a lock on etcd cannot, " +
			"not run for queue",
		"failover needs a store that can keep the lock in one store whose servers replicate it; cut a member off " +
			"from the others (isolate); fail its primary over to a replica (failover), which a lock on Redlock's independent masters cannot, not run for test-redlock",
	}, leftOut)
}

// testBackend is a store with a lock of each Redis kind, for jobs alone.
type testBackend struct{}

func (testBackend) Lock(name string) (BackendLock, bool) {
	switch name {
	case "test-redlock":
		return BackendLock{Kind: testMasters}, true
	case "test-setnx":
		return BackendLock{Kind: testPrimary}, true
	}
	return BackendLock{}, false
}
func (testBackend) Name() string                     { return "test" }
func (testBackend) Exec(string) (BackendLock, error) { return BackendLock{Kind: testPrimary}, nil }
func (testBackend) Kind() StoreKind                  { return testPrimary }
func (testBackend) Regressions() []lock.Regression   { return nil }
func (testBackend) Names() []string                  { return nil }
func (testBackend) About() (on, needs string)        { return "", "" }
func (testBackend) Locks() []lock.Description        { return nil }
func (testBackend) Adopt(any) (BackendLock, error)   { return BackendLock{}, errors.New("no") }

// The test backend's kinds: Redis's.
var (
	testPrimary = StoreKind{Name: "test", Label: "one Redis primary", Can: redisrun.Capabilities(false)}
	testMasters = StoreKind{Name: "test-masters", Label: "Redlock's independent masters", Can: redisrun.Capabilities(true)}
)

// A lesson that moves a client's own clock runs for a lock run as a
// program whose grants tell their loss, and is skipped, saying why, for a
// Go lock (its clock is the lab's) or a program whose grants carry no Lost.
func TestAClientsClockMovesForAProgramThatTells(t *testing.T) {
	s, err := Lookup("client-clock-back")
	require.NoError(t, err)
	require.True(t, s.movesClientClock())
	_, why := clientClockSkip(t.Context(), s, GrantShape{Token: true, Key: true, Tells: true})
	assert.Contains(t, why, "a Go lock runs inside the lab's own process")
	_, why = clientClockSkip(t.Context(), s, GrantShape{Program: true})
	assert.Contains(t, why, "the lock's grants carry no Lost")
	shim, why := clientClockSkip(t.Context(), s, GrantShape{Program: true, Tells: true})
	if why == "" {
		assert.NotEmpty(t, shim, "the shim the lesson's programs run with")
	} else {
		assert.Contains(t, why, "the lab cannot move a client's clock", "no C compiler: skipped, saying so")
	}

	other, err := Lookup("holder-told")
	require.NoError(t, err)
	assert.False(t, other.movesClientClock())
	shim, why = clientClockSkip(t.Context(), other, GrantShape{})
	assert.Empty(t, shim+why, "a lesson that moves no client's clock is not this check's")
}

// A configuration of a lock run as programs takes as many of a run's
// slots as leave one such configuration per CPU; a Go lock's takes one.
func TestALockRunAsProgramsRunsOnePerCPU(t *testing.T) {
	cfg := Config{shapes: map[string]GrantShape{"prog": {Program: true, Key: true}, "go": {Token: true, Key: true}}}
	assert.Equal(t, int64(4), cfg.slotsOf(job{lock: "prog"}, 8, 2), "eight slots on 2 CPUs: two at once")
	assert.Equal(t, int64(2), cfg.slotsOf(job{lock: "prog"}, 4, 2))
	assert.Equal(t, int64(1), cfg.slotsOf(job{lock: "prog"}, 2, 2))
	assert.Equal(t, int64(1), cfg.slotsOf(job{lock: "prog"}, 4, 8), "more CPUs than slots")
	assert.Equal(t, int64(3), cfg.slotsOf(job{lock: "prog"}, 3, 1), "one CPU: one at a time")
	assert.Equal(t, int64(1), cfg.slotsOf(job{lock: "go"}, 8, 2))
	assert.Equal(t, int64(1), cfg.slotsOf(job{lock: "unlearnt"}, 8, 2), "a lock not learnt is taken as a Go lock")
}
