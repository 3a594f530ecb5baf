package scenarios

// Stores says which stores a scenario runs on.
type Stores int

// The stores a scenario can run on.
const (
	EtcdOnly     Stores = iota // its faults or its workload are etcd's
	EtcdAndRedis               // its script runs on a Redis primary too
	RedisOnly                  // a lesson of a Redis primary (its failover)
	RedlockOnly                // a lesson of Redlock's independent masters
)

// LockKind is what kind of store a lock runs on, as far as the catalog's
// lessons care: etcd, one Redis primary, or Redlock's independent masters.
type LockKind int

// The kinds of lock a lesson can be for.
const (
	EtcdLock    LockKind = iota // a lock on etcd (every lock.EtcdFactory)
	RedisLock                   // a lock on one Redis primary
	RedlockLock                 // a lock over independent Redis masters
)

// NotFor says why s is no lesson for a lock of kind k, "" when it is one.
// A gate or a run leaves such a pair out — a lesson of another store says
// nothing about the lock — and says so; it is never a failure.
func (s Scenario) NotFor(k LockKind) string {
	switch {
	case k == EtcdLock && (s.Stores == RedisOnly || s.Stores == RedlockOnly):
		return s.Name + " is a Redis lesson"
	case k != EtcdLock && s.Stores == EtcdOnly:
		return s.Name + " is an etcd lesson (its faults or its workload are etcd's)"
	case k == RedlockLock && s.Stores != RedlockOnly:
		return s.Name + " is a lesson of one Redis primary (Redlock gives no token and runs on independent masters)"
	case k == RedisLock && s.Stores == RedlockOnly:
		return s.Name + " is a Redlock lesson"
	}
	return ""
}
