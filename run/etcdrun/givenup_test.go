package etcdrun

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/models"
)

// givingUp is etcd's Mutex whose Release says the session expired once
// its client gave the session up (Grant.Lost closed), as etcdctl lock
// does: it exits "session expired" rather than unlock.
type givingUp struct{ lock.Locker }

func (l givingUp) Release(ctx context.Context, g lock.Grant) error {
	select {
	case <-g.Lost:
		return lock.ErrSessionExpired
	default:
		return l.Locker.Release(ctx, g)
	}
}

// A lock whose client heard no answer to its keep-alives for a TTL —
// the server's answers held up with no fault scheduled, as a machine too
// busy to answer holds them — gives its session up, rightly: its release
// says so, the history records what it said with the keep-alives and
// their answers, and the environment, not the lock, is blamed.
func TestALeaseGivenUpUnheardIsTheEnvironments(t *testing.T) {
	c, err := cluster.Start(t.Context(), cluster.Config{Members: 3})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	f := func(cli *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
		l, err := etcdlock.NewMutex(cli, name, opts)
		return givingUp{l}, err
	}
	ctx := t.Context()
	e, err := New(Config{Cluster: c, Factory: f, TTL: 1, RunID: "given-up", Resource: []string{"unfenced"}})
	require.NoError(t, err)
	e.Bind(ctx)
	t.Cleanup(func() { assert.NoError(t, e.Close()) })
	require.NoError(t, e.AddClient(ctx, "c1", "m1"))
	out, err := e.Acquire(ctx, "c1")
	require.NoError(t, err)
	require.True(t, out.Granted(), "%v", out)
	g, _, _ := e.Holding("c1")
	lost := g.Lost
	cl, err := c.Client(e.clientName("c1"))
	require.NoError(t, err)
	cl.CutAnswers()
	select {
	case <-lost:
	case <-time.After(10 * time.Second):
		t.Fatal("c1's client never gave its session up")
	}
	cl.Heal()
	_, err = e.ReleaseGrant(ctx, "c1", "")
	require.ErrorIs(t, err, lock.ErrSessionExpired)
	said := 0
	var saidEv history.Event
	for _, ev := range e.Events(0) {
		if ev.Type == history.Observed && ev.What == history.ObservedSaidEnded && ev.Client == "c1" {
			said++
			saidEv = ev
			assert.NotEmpty(t, ev.KeptAlive, "%+v", ev)
			assert.Positive(t, ev.RenewedAt, "%+v", ev)
		}
	}
	assert.Equal(t, 1, said)
	reports, err := e.Reports()
	require.NoError(t, err)
	require.Len(t, reports, 1)
	env := reports[0].Environment
	assert.Equal(t, models.Error, env.Result, "%s\n%+v", env.Explanation, saidEv)
	assert.Contains(t, env.Explanation, "c1's lock gave its lease up at")
}
