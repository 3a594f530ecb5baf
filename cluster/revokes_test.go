package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A revoke asked and not yet answered is waited for: the answer that it
// revoked the lease is the one given, the first of several; a refusal
// revokes nothing; a wait past its context gives what is known by then.
func TestARevokeStillCrossingTheLinkIsWaitedFor(t *testing.T) {
	var cl Client
	const lease = clientv3.LeaseID(7)
	cl.revokes.asked(int64(lease))
	got := make(chan time.Time)
	go func() {
		at, ok := cl.Revoked(context.Background(), lease)
		assert.True(t, ok)
		got <- at
	}()
	answered := time.Now()
	cl.revokes.answered(int64(lease), true)
	assert.False(t, (<-got).Before(answered), "the answer's time")

	cl.revokes.asked(int64(lease))
	cl.revokes.answered(int64(lease), false) // already gone: the first answer stands
	at, ok := cl.Revoked(context.Background(), lease)
	assert.True(t, ok)
	assert.False(t, at.Before(answered))

	cl.revokes.asked(8)
	cl.revokes.answered(8, false)
	_, ok = cl.Revoked(context.Background(), 8)
	assert.False(t, ok, "refused: nothing revoked")

	cl.revokes.asked(9) // never answered: the connection ended
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, ok = cl.Revoked(ctx, 9)
	assert.False(t, ok)
}
