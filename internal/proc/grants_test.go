package proc

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lock"
)

// A program's release reaches it only for the latest grant, once; an older
// grant, or none, is refused as not held.
func TestOnlyTheLatestGrantIsReleased(t *testing.T) {
	var l Latest
	asked := 0
	release := func(context.Context) error { asked++; return nil }
	old, now := lock.Grant{Key: "k", Token: 7}, lock.Grant{Key: "k", Token: 9}
	assert.ErrorIs(t, l.Release(t.Context(), now, release), lock.ErrNotHeld, "nothing granted yet")
	l.Set(old)
	l.Set(now)
	assert.ErrorIs(t, l.Release(t.Context(), old, release), lock.ErrNotHeld, "an older grant")
	withLease := now
	withLease.Lease = 42 // the lab learns the lease of a grant: still the same grant
	require.NoError(t, l.Release(t.Context(), withLease, release))
	assert.ErrorIs(t, l.Release(t.Context(), now, release), lock.ErrNotHeld, "released already")
	assert.Equal(t, 1, asked)
	l.Set(lock.Grant{Key: "k", Value: "v1"})
	assert.ErrorIs(t, l.Release(t.Context(), lock.Grant{Key: "k", Value: "v0"}, release), lock.ErrNotHeld, "another value")
}

// An error answer's class is the contract's error; its message is kept.
func TestAnErrorAnswerIsTheContractsError(t *testing.T) {
	down := errors.New("down")
	unavailable := func(string) error { return down }
	assert.ErrorIs(t, AnswerError("expired lease gone", "lock", unavailable), lock.ErrSessionExpired)
	assert.ErrorIs(t, AnswerError("not-held nothing to release", "lock", unavailable), lock.ErrNotHeld)
	assert.ErrorIs(t, AnswerError("unavailable no leader", "lock", unavailable), down)
	assert.EqualError(t, AnswerError("", "redislock", unavailable), "redislock: (no message)")
	assert.EqualError(t, AnswerError("disk full", "lock", unavailable), "lock: disk full")
}
