package scenarios_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/badlocks"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// A step that went otherwise than its script because of the lock is the
// lock's FAIL, naming the check, not the lab's ERROR: a waiter that misses
// its wake-up (deaf), and one whose timed-out acquire leaves its key
// queued (dup; deaf too), are left waiting for a free lock — hand-off. And
// a release of a grant long gone that deletes nothing and says so is no
// error of anyone's: retried-release accepts it, and the checks judge what
// it did.
func TestALocksOwnBugIsAFailNotAnError(t *testing.T) {
	t.Parallel() // a few short configurations, mostly waiting
	sum, err := scenarios.Run(t.Context(), scenarios.Config{
		Scenarios: []string{"gave-up", "retried-release"},
		Locks:     []string{"deaf", "dup"}, Resources: []string{"fenced"},
		Factories: map[string]etcdlock.Factory{
			"deaf": badlocks.Deaf,
			"dup":  badlocks.Dup,
		},
		Seed: 1, Runs: 1, Out: t.TempDir(),
	})
	require.NoError(t, err)
	want := map[string]models.Result{
		"gave-up/deaf": models.Fail, "gave-up/dup": models.Fail, "retried-release/dup": models.Pass,
	}
	for _, r := range sum.Results {
		name := r.Scenario + "/" + r.Lock
		w, ok := want[name]
		if !ok || w == models.Fail && busyHandOff(t, r) {
			continue
		}
		if r.NotJudged() {
			// The machine let a lease lapse on every attempt (a waiter's
			// key that gave up goes with its lease): never a PASS.
			assert.NotEqual(t, models.Pass, r.Verdict)
			t.Logf("%s: not judged: %s", name, r.Environmental())
			continue
		}
		if w == models.Fail && r.Verdict == models.Pass && timedByMachine(t, r) {
			// The lock is documented here, not in the catalog, to FAIL: its
			// run says PASS, and judged as documented to FAIL, the lab says
			// the machine decided its timing (see models' untimed).
			t.Logf("%s: not judged: the machine decided the run's timing", name)
			continue
		}
		if !assert.Equal(t, w, r.Verdict, "%s: %s", name, r.Error) {
			for _, v := range r.Checks {
				t.Logf("%s: %s %s: %s %v", name, v.Check, v.Result, v.Explanation, v.Evidence)
			}
			t.Logf("%s: effects %+v; earlier attempts %v; history %s", name, r.Effects, r.Retried, r.History)
		}
		if w == models.Fail {
			assert.True(t, slices.ContainsFunc(r.Checks, func(v models.Verdict) bool {
				return v.Check == "hand-off" && v.Result == models.Fail
			}), "%s: caught by hand-off", name)
		}
	}
}

// timedByMachine reports whether r's history, judged as a run documented
// to FAIL, is one whose timing the machine decided (too busy to count for
// most of it): no evidence either way.
func timedByMachine(t *testing.T, r scenarios.Result) bool {
	t.Helper()
	h, events, err := history.ReadFile(r.History)
	if !assert.NoError(t, err) {
		return false
	}
	h.Expect = string(models.ExpectFail)
	rep, _, _, err := models.JudgeHistory(h, events, time.Second)
	return assert.NoError(t, err) && models.Unjudged(false, rep.Verdicts()) != ""
}

// busyHandOff reports whether the machine was too busy to judge r's
// hand-off (go test runs packages side by side): the check said so, and
// the result is not judged — never a PASS, never the lock's FAIL.
func busyHandOff(t *testing.T, r scenarios.Result) bool {
	t.Helper()
	if !slices.ContainsFunc(r.Checks, func(v models.Verdict) bool {
		return v.Check == "hand-off" && v.Result == models.Unknown
	}) {
		return false
	}
	assert.NotEqual(t, models.Pass, r.Verdict)
	assert.False(t, r.Matches)
	t.Logf("%s × %s: the machine was too busy to judge the hand-off", r.Scenario, r.Lock)
	return true
}

// silent is a user's lock that stops answering: every acquire waits until
// its deadline — but the lab's preflight's, alone on a healthy cluster,
// which it grants (answers is true for that first Locker only), so the
// run learns its grants' shape at once rather than after the preflight's
// whole timeout.
type silent struct{ answers bool }

func (s silent) Acquire(ctx context.Context) (lock.Grant, error) {
	if s.answers {
		return lock.Grant{Token: 1}, nil
	}
	<-ctx.Done()
	return lock.Grant{}, ctx.Err()
}
func (silent) Release(context.Context, lock.Grant) error { return lock.ErrNotHeld }
func (silent) Lease() clientv3.LeaseID                   { return 0 }
func (silent) Close() error                              { return nil }

// A lock that never grants matches nothing, not even a lesson whose
// documented outcome is FAIL: the clients it never granted do not enter
// their critical sections, and no safety check catches anything. Its
// waiter, left waiting for a lock that stood free, is its hand-off FAIL.
// The steps that went otherwise than the script are in the history file,
// which a check judges as the run did.
func TestASilentLockMatchesNothing(t *testing.T) {
	t.Parallel() // a few configurations, mostly waiting: side by side with the others
	var made atomic.Int32
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Out: t.TempDir(),
		Scenarios: []string{"paused-holder"}, Locks: []string{"silent"}, Resources: []string{"unfenced"},
		Factories: map[string]etcdlock.Factory{"silent": func(*clientv3.Client, string, lock.Options) (lock.Locker, error) {
			return silent{answers: made.Add(1) == 1}, nil
		}},
		Seed: 1, Runs: 1,
	})
	require.NoError(t, err)
	require.Len(t, sum.Results, 1)
	r := sum.Results[0]
	assert.Equal(t, scenarios.ExpectFail, r.Expected)
	assert.False(t, r.Matches, "%s: %s", r.Verdict, r.Error)
	if busyHandOff(t, r) {
		return
	}
	assert.Equal(t, models.Fail, r.Verdict)
	assert.True(t, slices.ContainsFunc(r.Checks, func(v models.Verdict) bool {
		return v.Check == "hand-off" && v.Result == models.Fail
	}), "caught by hand-off")
	assert.Equal(t, models.Fail, r.Progress)
	assert.Equal(t, 1, sum.ExitCode())
	// A client the lock gave no lease has none to lose: the wait for it
	// is an error, and no effect about it happened.
	assert.Contains(t, r.Error, "wait-lease-gone c1: got \"error: c1 has no lease the lab knows of")
	h, events, err := history.ReadFile(r.History)
	require.NoError(t, err)
	assert.Equal(t, r.Error, history.RunError(events), "the run's error ends its history")
	_, _, j, err := models.JudgeHistory(h, events, 0)
	require.NoError(t, err)
	assert.Equal(t, models.Fail, j.Verdict)
	assert.False(t, j.Matches)
	assert.Equal(t, r.Error, j.Error)
	for _, e := range r.Effects {
		assert.False(t, e.Happened, "%s", e.Name)
	}
}
