package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
)

// A program the lab does not link — here a second etcd client, as a lock
// run as a process would be — reaches the cluster through a lab client's
// Endpoint; with ReadWire, every lease the server grants it is learned off
// the wire, the later ones too (their requests' headers come from the HPACK
// table, not literally).
func TestReadWireLearnsAnotherProgramsLeases(t *testing.T) {
	c := start(t, 3)
	cl, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	cl.ReadWire()
	other, err := clientv3.New(clientv3.Config{Endpoints: cl.Etcd().Endpoints()})
	require.NoError(t, err)
	defer other.Close()

	var want []clientv3.LeaseID
	for range 5 {
		resp, err := other.Grant(ctx(t), 5)
		require.NoError(t, err)
		want = append(want, resp.ID)
		// Other traffic on the same connection between grants.
		_, err = other.Put(ctx(t), "k", "v", clientv3.WithLease(resp.ID))
		require.NoError(t, err)
	}
	var got []clientv3.LeaseID
	for _, g := range cl.LeaseGrants() {
		got = append(got, g.ID)
		assert.Equal(t, 5*time.Second, g.TTL, "lease %x: the TTL its grant's answer says", g.ID)
	}
	assert.Equal(t, want, got)
}

// With ReadWire, the client's request, answer and wake-up counts are read
// off the link: another program's unary requests and their answers count
// (an error is no answer), its streams do not, and
// each watch response that carries events is one wake-up — as the lab
// counts its own client's, which now are read off the link too, once.
func TestReadWireCountsRequestsAndWakeUps(t *testing.T) {
	c := start(t, 3)
	cl, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	_, err = cl.Etcd().Put(ctx(t), "before", "wire") // the lab's own connection, up before the wire is read
	require.NoError(t, err)
	cl.ReadWire()
	other, err := clientv3.New(clientv3.Config{Endpoints: cl.Etcd().Endpoints()})
	require.NoError(t, err)
	defer other.Close()

	wctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	events := other.Watch(wctx, "w", clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	<-events // created: no events, no wake-up
	reqs, answered := cl.Requests(), cl.Answered()
	for i := range 3 {
		_, err := other.Put(ctx(t), fmt.Sprintf("w%d", i), "v")
		require.NoError(t, err)
		<-events
	}
	_, err = other.Get(ctx(t), "w", clientv3.WithPrefix())
	require.NoError(t, err)
	_, err = cl.Etcd().Get(ctx(t), "w", clientv3.WithPrefix())
	require.NoError(t, err)
	assert.Equal(t, reqs+5, cl.Requests(), "three puts and a get of the other program's, a get of the lab's")
	assert.Equal(t, answered+5, cl.Answered(), "and their five answers, read off the link: a program's wait is seen")
	_, err = other.Revoke(ctx(t), 0x1234)
	require.Error(t, err, "no such lease")
	assert.Equal(t, answered+5, cl.Answered(), "an error is no answer")
	assert.EqualValues(t, 3, cl.WatchEvents(), "three watch responses carried events")
}

// Without ReadWire, another program's leases are not the client's.
func TestWireIsNotReadUnlessAsked(t *testing.T) {
	c := start(t, 3)
	cl, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	other, err := clientv3.New(clientv3.Config{Endpoints: cl.Etcd().Endpoints()})
	require.NoError(t, err)
	defer other.Close()
	_, err = other.Grant(ctx(t), 5)
	require.NoError(t, err)
	assert.Empty(t, cl.LeaseGrants())
}

// Each keep-alive a client sends is noted with its lease, and each answer
// that says the lease lives: the lab's own connection's through the
// interceptor, another program's off the wire. A lease no keep-alive went
// out for has none, and none is known before the first one was sent; an
// answer that the lease is gone is no sign of life.
func TestKeepAlivesAreNoted(t *testing.T) {
	c := start(t, 3)
	cl, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	renewed := func(id clientv3.LeaseID) bool {
		_, ok := cl.LastRenewal(id, time.Now())
		return ok
	}

	before := time.Now()
	own, err := cl.Etcd().Grant(ctx(t), 5)
	require.NoError(t, err)
	_, err = cl.Etcd().KeepAliveOnce(ctx(t), own.ID)
	require.NoError(t, err)
	at, ok := cl.LastRenewal(own.ID, time.Now())
	require.True(t, ok, "the lab's own keep-alive is noted")
	assert.True(t, at.After(before))
	_, ok = cl.LastRenewal(own.ID, before)
	assert.False(t, ok, "no keep-alive was sent before the lease existed")
	assert.Len(t, cl.KeptAlive(own.ID), 1, "the answer to the lab's own keep-alive is noted")
	_, err = cl.Etcd().Revoke(ctx(t), own.ID)
	require.NoError(t, err)
	_, err = cl.Etcd().KeepAliveOnce(ctx(t), own.ID)
	require.Error(t, err)
	assert.Len(t, cl.KeptAlive(own.ID), 1, "an answer that the lease is gone is not one it lives")

	other := wiredOther(t, cl)
	theirs, silent := grant(t, other), grant(t, other)
	_, err = other.KeepAliveOnce(ctx(t), theirs.ID)
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return renewed(theirs.ID) }, wait, 10*time.Millisecond,
		"another program's keep-alive is read off the wire")
	assert.Eventually(t, func() bool { return len(cl.KeptAlive(theirs.ID)) == 1 }, wait, 10*time.Millisecond,
		"and the answer to it")
	assert.False(t, renewed(silent.ID), "a lease nobody renewed")
	assert.Empty(t, cl.KeptAlive(silent.ID))
}

// A revoke the server answered is noted with its lease: the lab's own
// connection's through the interceptor, another program's off the wire. A
// revoke of a lease already gone is refused, and revoked nothing.
func TestRevokesAreNoted(t *testing.T) {
	c := start(t, 3)
	cl, err := c.NewClient("c1", "m1")
	require.NoError(t, err)
	own, err := cl.Etcd().Grant(ctx(t), 5)
	require.NoError(t, err)
	_, known := cl.Revoked(ctx(t), own.ID)
	assert.False(t, known, "not revoked yet")
	before := time.Now()
	_, err = cl.Etcd().Revoke(ctx(t), own.ID)
	require.NoError(t, err)
	at, known := cl.Revoked(ctx(t), own.ID)
	require.True(t, known, "the lab's own revoke is noted")
	assert.False(t, at.Before(before))

	other := wiredOther(t, cl)
	theirs, gone := grant(t, other), grant(t, other)
	_, err = c.Admin().Revoke(ctx(t), gone.ID) // not through the client's link
	require.NoError(t, err)
	_, err = other.Revoke(ctx(t), gone.ID)
	require.Error(t, err, "already gone")
	_, err = other.Revoke(ctx(t), theirs.ID)
	require.NoError(t, err)
	assert.Eventually(t, func() bool { _, ok := cl.Revoked(ctx(t), theirs.ID); return ok }, wait, 10*time.Millisecond,
		"another program's revoke is read off the wire")
	_, known = cl.Revoked(ctx(t), gone.ID)
	assert.False(t, known, "a refused revoke ended nothing")
}

// wiredOther has cl read its link (ReadWire) and returns another program's
// client through it, closed with the test.
func wiredOther(t *testing.T, cl *cluster.Client) *clientv3.Client {
	t.Helper()
	cl.ReadWire()
	other, err := clientv3.New(clientv3.Config{Endpoints: cl.Etcd().Endpoints()})
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })
	return other
}

// grant has cli take a lease of 5 s.
func grant(t *testing.T, cli *clientv3.Client) *clientv3.LeaseGrantResponse {
	t.Helper()
	resp, err := cli.Grant(ctx(t), 5)
	require.NoError(t, err)
	return resp
}
