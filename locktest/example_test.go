package locktest_test

import (
	"testing"

	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/locktest"
)

// newMyLock stands for your lock's factory: anything that makes a
// lock.Locker from an etcd client.
var newMyLock etcdlock.Factory = etcdlock.NewQueue

// testMyLock is the whole gate, as it goes into your own _test.go (named
// TestMyLock there): every catalog scenario on an embedded 3-member
// cluster, the lock protecting a fenced store and an etcd key, three seeds,
// etcd's own Mutex run beside it for comparison.
func testMyLock(t *testing.T) {
	locktest.Run(t, newMyLock,
		locktest.Seeds(1, 3),
		locktest.CompareWith("etcd-mutex"))
}

// The go-test gate for a lock of your own.
func ExampleRun() {
	_ = testMyLock // go test -run TestMyLock -v lists every scenario × resource × seed
}
