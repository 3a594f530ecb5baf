package locktest_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/redislock"
	"github.com/locklab/locklab/locktest"
	// The Redis store, linked by this import (a gate of etcd locks alone
	// links no Redis):
	// _ "github.com/locklab/locklab/scenarios/redisstore"
)

// newMyRedisLock stands for your Redis lock's factory: anything that makes
// a lock.Locker from the lab's Redis clients (one: the client's own link to
// the primary). Its grants name the key and the value the grant wrote
// there, and a fencing token if the lock gives one.
var newMyRedisLock lock.Factory[[]*redis.Client] = redislock.NewWatchdog

// testMyRedisLock is the gate of a Redis lock: every Redis lesson on a
// primary with two replicas started for each configuration (redis-server
// must be installed), the lock protecting a fenced and an unfenced store,
// the lab's redis-setnx beside it.
func testMyRedisLock(t *testing.T) {
	locktest.Run(t, newMyRedisLock,
		locktest.Store("redis"),
		locktest.CompareWith("redis-setnx"))
}

// The go-test gate for a Redis lock of your own.
func ExampleStore() {
	_ = testMyRedisLock // go test -run TestMyRedisLock -v lists every Redis lesson × resource × seed
}
