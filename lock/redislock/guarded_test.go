package redislock_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/redislock"
	"github.com/locklab/locklab/lock/resource"
)

// redis-guarded writes only while the lock key holds the writer's grant's
// value: the holder's write is accepted; a paused holder's, after the key
// became the next holder's or expired, is refused; a grant that names no
// value is an error, not a silent write.
func TestRedisGuardedWritesOnlyForTheGrantTheKeyHolds(t *testing.T) {
	s := start(t, "redis-setnx")
	admin := s.Admin(s.Primary())
	r, err := resource.NewResource(redislock.GuardedResource, "locklab/guarded/counter")
	require.NoError(t, err)
	key := "locklab/guarded/lock"
	require.NoError(t, admin.Set(t.Context(), key, "v1", 0).Err())
	holder, stale := lock.Grant{Key: key, Value: "v1"}, lock.Grant{Key: key, Value: "v0"}

	v, err := r.Read(t.Context(), admin, holder)
	require.NoError(t, err)
	assert.Zero(t, v, "never written")
	w, err := r.Write(t.Context(), admin, holder, 1)
	require.NoError(t, err)
	assert.True(t, w.Accepted)
	w, err = r.Write(t.Context(), admin, stale, 2)
	require.NoError(t, err)
	assert.Equal(t, resource.LockLost, w.Rejection)
	require.NoError(t, admin.Del(t.Context(), key).Err())
	w, err = r.Write(t.Context(), admin, holder, 3)
	require.NoError(t, err)
	assert.Equal(t, resource.LockLost, w.Rejection, "the key expired under its holder")
	v, err = r.Read(t.Context(), admin, holder)
	require.NoError(t, err)
	assert.EqualValues(t, 1, v)

	_, err = r.Write(t.Context(), admin, lock.Grant{Key: key}, 4)
	assert.ErrorContains(t, err, "names none")
	_, err = r.Read(t.Context(), nil, holder)
	assert.ErrorContains(t, err, "need a Redis client")
}
