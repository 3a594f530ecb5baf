package scenarios_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// bare hides what a grant carries: its key, as a lock whose token is its
// own does, or its token too; it keeps what it hides for its release.
type bare struct {
	lock.Locker
	noToken bool
	held    lock.Grant
}

func (b *bare) Acquire(ctx context.Context) (lock.Grant, error) {
	g, err := b.Locker.Acquire(ctx)
	if err != nil {
		return g, err
	}
	b.held = g
	shown := lock.Grant{Token: g.Token, Lease: g.Lease, Lost: g.Lost}
	if b.noToken {
		shown.Token = 0
	}
	return shown, nil
}

func (b *bare) Release(ctx context.Context, _ lock.Grant) error { return b.Locker.Release(ctx, b.held) }

// A lock whose grants name no key (a token of its own), or carry no
// token, is judged on what it can do: the resources its grants cannot
// write to, and the lessons that need a grant's key, are skipped, saying
// why — not an ERROR of every scripted lesson, nor a FAIL of one whose
// script could not name its key. What it can do runs as for any lock: a
// script names a grant with no token as it would a token's
// ("granted token=t1"), in the order the grants come.
func TestALockWithoutAKeyOrATokenIsJudgedOnWhatItCanDo(t *testing.T) {
	t.Parallel() // a few configurations, mostly waiting: side by side with the others
	factory := func(noToken bool) etcdlock.Factory {
		return func(cli *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
			l, err := etcdlock.NewQueue(cli, name, opts)
			return &bare{Locker: l, noToken: noToken}, err
		}
	}
	sum, err := scenarios.Run(t.Context(), scenarios.Config{
		Scenarios: []string{"paused-holder", "isolated-holder", "retried-release", "contention"},
		Locks:     []string{"own-token", "no-token"},
		Resources: resource.Names(), Factories: map[string]etcdlock.Factory{"own-token": factory(false), "no-token": factory(true)},
		Seed: 1, Runs: 1, Out: t.TempDir(),
	})
	require.NoError(t, err)
	got := map[string]scenarios.Result{}
	for _, r := range sum.Results {
		got[r.Scenario+" "+r.Lock+" "+r.Resource] = r
	}
	verdict := func(k string, v models.Result) {
		r := got[k]
		assert.Empty(t, r.Skipped, k)
		if !assert.Equal(t, v, r.Verdict, "%s: %s", k, r.Error) {
			for _, c := range r.Checks {
				t.Logf("%s: %s %s: %s %v", k, c.Check, c.Result, c.Explanation, c.Evidence)
			}
			t.Logf("%s: effects %+v; earlier attempts %v", k, r.Effects, r.Retried)
		}
		assert.True(t, r.Matches, k)
	}
	skipped := func(k, why string) {
		assert.Contains(t, got[k].Skipped, why, k)
		assert.Empty(t, got[k].Verdict, k)
	}
	verdict("paused-holder own-token unfenced", models.Fail)
	verdict("paused-holder own-token fenced", models.Pass)
	skipped("paused-holder own-token etcd-guarded", "the lock's grants name no key")
	verdict("contention own-token fenced", models.Pass)
	skipped("contention own-token etcd-guarded", "the lock's grants name no key")
	verdict("paused-holder no-token unfenced", models.Fail)
	skipped("paused-holder no-token fenced", "carry no fencing token")
	// isolated-holder's documented unfenced FAIL is a stale write: without
	// a token it reads as one more increment.
	skipped("isolated-holder no-token unfenced", "only a fencing token shows")
	verdict("isolated-holder own-token unfenced", models.Fail)
	verdict("contention no-token unfenced", models.Pass)
	skipped("contention no-token fenced", "carry no fencing token")
	skipped("contention no-token etcd-guarded", "carry no fencing token")
	for _, res := range resourcesOn(scenarios.DefaultKind()) {
		skipped("retried-release own-token "+res, "does not apply to this lock: its grants name no key")
	}
}

// remembering is a lock that remembers its grant and, asked again without
// a release, takes a key it still sees — read from its own member alone,
// serializably — for a grant it still holds: its local view, which a
// member cut off from the quorum keeps stale.
type remembering struct {
	lock.Locker
	cli  *clientv3.Client
	last lock.Grant
}

func (r *remembering) Acquire(ctx context.Context) (lock.Grant, error) {
	if r.last.Key != "" {
		resp, err := r.cli.Get(ctx, r.last.Key, clientv3.WithSerializable())
		if err == nil && len(resp.Kvs) == 1 && resp.Kvs[0].CreateRevision == r.last.Token {
			return r.last, nil // the bug: its own view, however stale
		}
	}
	g, err := r.Locker.Acquire(ctx)
	if err == nil {
		r.last = g
	}
	return g, err
}

func (r *remembering) Release(ctx context.Context, g lock.Grant) error {
	r.last = lock.Grant{}
	return r.Locker.Release(ctx, g)
}

// isolated-asks asks from the cut-off side with the Locker the client has,
// whatever it remembers: a lock that trusts its member's stale view there
// is caught on every seed, though it makes its session at once (a lazy
// one, like stale-reentry's, was caught before only because the lab gave
// the client a new Locker).
func TestIsolatedAsksCatchesAStaleLocalView(t *testing.T) {
	t.Parallel() // a few configurations, mostly waiting: side by side with the others
	sum, err := scenarios.Run(t.Context(), scenarios.Config{
		Scenarios: []string{"isolated-asks"}, Locks: []string{"remembering"}, Resources: []string{"fenced"},
		Factories: map[string]etcdlock.Factory{"remembering": func(cli *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
			l, err := etcdlock.NewQueue(cli, name, opts)
			return &remembering{Locker: l, cli: cli}, err
		}},
		Seed: 1, Runs: 3, Out: t.TempDir(),
	})
	require.NoError(t, err)
	require.Len(t, sum.Results, 3)
	for _, r := range sum.Results {
		assert.Equal(t, models.Fail, r.Verdict, "seed %d: %s", r.Seed, r.Error)
	}
}
