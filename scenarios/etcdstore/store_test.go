package etcdstore_test

import (
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/scenarios/etcdstore"
)

// etcd registers itself as the default store: its locks, its known-bad
// ones and a user's etcdlock.Factory are runs' locks like any store's.
func TestEtcdIsTheDefaultStore(t *testing.T) {
	assert.Equal(t, etcdstore.Kind().Name, scenarios.DefaultKind().Name)
	for _, name := range []string{"queue", "etcd-mutex", "etcd-11456"} {
		l, ok := scenarios.LookupBackendLock(name)
		require.True(t, ok, name)
		assert.Equal(t, etcdstore.Kind().Name, l.Kind.Name, name)
	}
	l, _ := scenarios.LookupBackendLock("etcd-election")
	assert.Contains(t, l.Weak, "expire-while-waiting", "a lock's documented weaknesses come with it")

	store, _, err := scenarios.Adopt("", etcdlock.Factory(etcdlock.NewQueue))
	require.NoError(t, err)
	assert.Equal(t, etcdstore.Kind().Name, store)
	var onRedis lock.Factory[[]*redis.Client]
	_, _, err = scenarios.Adopt(etcdstore.Kind().Name, onRedis)
	assert.ErrorContains(t, err, "the etcd store takes an etcdlock.Factory")
}

// A lock is given what its store can do: a lesson left out on etcd names
// what etcd cannot.
func TestEtcdsLessonsFollowItsCapabilities(t *testing.T) {
	failover, err := scenarios.Lookup("failover")
	require.NoError(t, err)
	assert.Contains(t, failover.NotFor(etcdstore.Kind()), "fail its primary over to a replica")
	paused, err := scenarios.Lookup("paused-holder")
	require.NoError(t, err)
	assert.True(t, paused.For(etcdstore.Kind()))
}

// Linking the package registers etcd as the default store.
func ExampleKind() {
	k := etcdstore.Kind()
	fmt.Println(k.Name, scenarios.DefaultKind().Name == k.Name)
	// Output: etcd true
}
