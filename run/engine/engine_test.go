package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/run/engine"
)

// memStore is a store held in memory: one lock key, its holder's token,
// granted in turn; its links lead nowhere (its lock talks over none).
type memStore struct {
	mu     sync.Mutex
	holder int64 // the token holding the key, zero if free
	tokens int64
	made   map[string]int // lockers made, by client
	// deaf: the lockers made from now on ignore their context's deadline.
	deaf bool
}

func (s *memStore) Links(_, member string) ([]*netproxy.Proxy, error) {
	if member != "m1" {
		return nil, errors.New("unknown member " + member)
	}
	p, err := netproxy.New(func() (string, error) { return "127.0.0.1:1", nil })
	return []*netproxy.Proxy{p}, err
}

func (s *memStore) Locker(client string, _ []*netproxy.Proxy) (lock.Locker, func() error, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.made[client]++
	if s.deaf {
		return deafLock{make(chan struct{})}, nil, nil
	}
	return memLock{s}, nil, nil
}

func (s *memStore) Follow(_ string, g lock.Grant) (int64, func(time.Time)) { return g.Token, nil }
func (s *memStore) Released(int64) bool                                    { return false }
func (s *memStore) Settle(context.Context)                                 {}

func (s *memStore) Gone(_ context.Context, lease int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.holder != lease, nil
}

func (s *memStore) Left(context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holder != 0 {
		return []string{"the key"}, nil
	}
	return nil, nil
}

// free ends the holder's grant, as an expiry does.
func (s *memStore) free() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holder = 0
}

type memLock struct{ s *memStore }

func (l memLock) Acquire(ctx context.Context) (lock.Grant, error) {
	for {
		l.s.mu.Lock()
		if l.s.holder == 0 {
			l.s.tokens++
			l.s.holder = l.s.tokens
			g := lock.Grant{Key: "lock", Value: "v", Token: l.s.tokens}
			l.s.mu.Unlock()
			return g, nil
		}
		l.s.mu.Unlock()
		select {
		case <-ctx.Done():
			return lock.Grant{}, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (l memLock) Release(_ context.Context, g lock.Grant) error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.s.holder != g.Token {
		return lock.ErrNotHeld
	}
	l.s.holder = 0
	return nil
}

func (memLock) Close() error { return nil }

// deafLock ignores its context: its Acquire returns only when it is
// closed.
type deafLock struct{ closed chan struct{} }

func (l deafLock) Acquire(context.Context) (lock.Grant, error) {
	<-l.closed
	return lock.Grant{}, errors.New("closed")
}

func (deafLock) Release(context.Context, lock.Grant) error { return lock.ErrNotHeld }
func (l deafLock) Close() error                            { close(l.closed); return nil }

func newEngine(t *testing.T) (*engine.Engine, *memStore) {
	t.Helper()
	return newEngineWithin(t, 0)
}

// newEngineWithin is newEngine whose operations time out after opTimeout
// (zero: the default).
func newEngineWithin(t *testing.T, opTimeout time.Duration) (*engine.Engine, *memStore) {
	t.Helper()
	s := &memStore{made: map[string]int{}}
	var res []resource.Resource
	for _, name := range []string{"unfenced", "fenced"} {
		r, err := resource.NewResource(name, "")
		require.NoError(t, err)
		res = append(res, r)
	}
	e, err := engine.New(engine.Config{Store: s, Resources: res, Options: lock.Options{TTL: 1}, StoreName: "memory",
		OpTimeout: opTimeout})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, e.Finish(context.Background(), nil, nil)) })
	e.Bind(context.WithoutCancel(t.Context()))
	return e, s
}

func TestClientsTakingTurnsPassEveryCheck(t *testing.T) {
	e, _ := newEngine(t)
	ctx := t.Context()
	for _, c := range []string{"c1", "c2"} {
		require.NoError(t, e.AddClient(ctx, c, "m1"))
	}
	for _, c := range []string{"c1", "c2", "c1"} {
		out, err := e.Acquire(ctx, c)
		require.NoError(t, err)
		assert.Equal(t, run.Granted, out.Kind)
		_, err = e.CSWork(ctx, c, 0)
		require.NoError(t, err)
		out, err = e.ReleaseGrant(ctx, c, "")
		require.NoError(t, err)
		assert.Equal(t, run.Released, out.Kind)
	}
	reports, err := e.Reports()
	require.NoError(t, err)
	for i, r := range reports {
		assert.Equal(t, models.Pass, r.Result(), e.Resources()[i])
	}
	assert.ErrorContains(t, e.AddClient(ctx, "c1", "m1"), "exists already")
	assert.ErrorContains(t, e.AddClient(ctx, "c3", "m9"), "unknown member m9")
	_, err = e.Acquire(ctx, "c9")
	assert.ErrorContains(t, err, `unknown client "c9" (clients: c1, c2)`)
}

// A paused holder whose lock ends meanwhile writes after the next holder:
// the unfenced counter loses an update and the checks say so; the fenced
// one refuses the late write. The pause is a window on every history.
func TestAPausedHolderIsCaughtAndItsPauseIsOnTheTimeline(t *testing.T) {
	e, s := newEngine(t)
	ctx := t.Context()
	require.NoError(t, e.AddClient(ctx, "c1", "m1"))
	require.NoError(t, e.AddClient(ctx, "c2", "m1"))
	_, err := e.Acquire(ctx, "c1")
	require.NoError(t, err)
	_, err = e.Pause(ctx, "c1", resource.BeforeWrite)
	require.NoError(t, err)
	out, err := e.Start(ctx, "c1", run.DoingSection, func(ctx context.Context, c string) (run.Outcome, error) { return e.CSWork(ctx, c, 0) })
	require.NoError(t, err)
	assert.Equal(t, run.Started, out.Kind)
	out, err = e.WaitPaused(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, resource.BeforeWrite, out.Point)
	s.free() // c1's grant ends on the store while it is paused
	_, err = e.Acquire(ctx, "c2")
	require.NoError(t, err)
	_, err = e.CSWork(ctx, "c2", 0)
	require.NoError(t, err)
	_, err = e.Resume(ctx, "c1")
	require.NoError(t, err)
	out, err = e.Await(ctx, "c1")
	require.NoError(t, err)
	require.Len(t, out.Writes, 2)
	assert.True(t, out.Writes[0].Written.Accepted, "unfenced takes the late write")
	assert.False(t, out.Writes[1].Written.Accepted, "fenced refuses it")
	reports, err := e.Reports()
	require.NoError(t, err)
	assert.Equal(t, models.Fail, reports[0].Result(), "unfenced")
	var edges []history.Type
	for _, ev := range e.Events(0) {
		if ev.Spec != nil && ev.Spec.Kind == history.FaultPauseClient {
			edges = append(edges, ev.Type)
		}
	}
	assert.Equal(t, []history.Type{history.FaultStart, history.FaultEnd}, edges)
}

func TestACrashedClientStartsAgainHoldingNothing(t *testing.T) {
	e, s := newEngine(t)
	ctx := t.Context()
	require.NoError(t, e.AddClient(ctx, "c1", "m1"))
	_, err := e.Acquire(ctx, "c1")
	require.NoError(t, err)
	out, err := e.Crash(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, run.Crashed, out.Kind)
	assert.Equal(t, 1, s.made["c1"], "its lock dies with it, made anew at its next step")
	assert.Empty(t, e.Holders())
	lease, err := e.LeaseOf("c1")
	require.NoError(t, err)
	assert.Equal(t, int64(1), lease, "what it held is left on the store")
	out, err = e.CSWork(ctx, "c1", 0)
	assert.ErrorIs(t, err, lock.ErrNotHeld)
	assert.Equal(t, run.FailNoGrant, out.Failure)
	assert.Equal(t, 2, s.made["c1"], "a crashed client makes its lock anew")
	_, err = e.WaitQueued(ctx, "c1")
	assert.ErrorContains(t, err, "c1 is not acquiring")
	s.free() // the store ends what the crash left behind
	out, err = e.WaitLeaseGone(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, run.LeaseGone, out.Kind)
	out, err = e.WaitFree(ctx)
	require.NoError(t, err)
	assert.Equal(t, run.Free, out.Kind)
	_, err = e.Expire(ctx, "c1", "revoke")
	assert.ErrorContains(t, err, "expire: not available on memory")
}

// A store that cannot tell its clients' writes on the wire has no lost
// answers: the step says so, naming the store, and nothing is recorded.
func TestALostAnswerNeedsAStoreThatSeesWrites(t *testing.T) {
	e, _ := newEngine(t)
	require.NoError(t, e.AddClient(t.Context(), "c1", "m1"))
	_, err := e.AcquireAnswerLost(t.Context(), "c1")
	assert.ErrorContains(t, err, "acquire answer=lost: not available on memory")
	assert.Empty(t, e.Events(0)[1:], "only c1's connection: %v", e.Events(0))
}

// A lock whose Acquire ignores its context's deadline does not hang the
// run: history.DeadlineWait after the deadline the lab stops waiting, the
// deadline check FAILs it, the client's next step is refused (its Locker
// is still in that Acquire) until a crash gives it a new lock, and the
// call left behind ends with the run.
func TestALockIgnoringItsDeadlineIsFailedNotWaitedFor(t *testing.T) {
	t.Parallel()
	e, s := newEngineWithin(t, 100*time.Millisecond)
	ctx := t.Context()
	s.deaf = true
	require.NoError(t, e.AddClient(ctx, "c1", "m1"))
	s.deaf = false
	_, err := e.Acquire(ctx, "c1")
	require.ErrorIs(t, err, run.ErrIgnoredDeadline)
	_, err = e.Acquire(ctx, "c1")
	require.ErrorIs(t, err, run.ErrStuck)
	_, err = e.Crash(ctx, "c1")
	require.NoError(t, err)
	out, err := e.Acquire(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, run.Granted, out.Kind)
	reports, err := e.Reports()
	require.NoError(t, err)
	for _, v := range reports[0].Verdicts() {
		if v.Check == "deadline" {
			assert.Equal(t, models.Fail, v.Result, v.Explanation)
			return
		}
	}
	t.Fatalf("no deadline check in %v", reports[0].Verdicts())
}

// A hold of the answers from a client's next renewal needs a store that
// knows its renewals on the wire: one that follows no grant by a value
// its requests carry says so, and nothing lands on the timeline.
func TestAHoldAtTheRenewalNeedsAStoreThatSeesRenewals(t *testing.T) {
	e, _ := newEngine(t)
	require.NoError(t, e.AddClient(t.Context(), "c1", "m1"))
	out, err := e.Acquire(t.Context(), "c1")
	require.NoError(t, err)
	require.True(t, out.Granted(), "%v", out)
	_, err = e.HoldAnswers(t.Context(), "c1", time.Second)
	assert.ErrorContains(t, err, "hold-answers: not available on memory")
	assert.Empty(t, history.FaultWindows(e.Events(0)))
}
