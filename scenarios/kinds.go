package scenarios

import (
	"slices"
	"strings"
)

// LockKind is the store a lock runs on, in the shape the catalog's lessons
// care about, named as the store is (Backend.Name): "etcd", "redis" (one
// primary with replicas), "redlock" (independent masters). A new store's
// locks are of a kind of its own; the lessons for them say so in Stores.
type LockKind string

// The kinds of lock of the stores the lab has.
const (
	EtcdLock    LockKind = "etcd"    // a lock on etcd (every etcdlock.Factory)
	RedisLock   LockKind = "redis"   // a lock on one Redis primary
	RedlockLock LockKind = "redlock" // a lock over independent Redis masters
	// ZooKeeperLock is a lock on a ZooKeeper ensemble.
	ZooKeeperLock LockKind = "zookeeper"
)

// kindLabels say what each kind runs on, in a reason's words; a kind not
// here is said by its name.
var kindLabels = map[LockKind]string{
	EtcdLock:      "etcd",
	RedisLock:     "one Redis primary",
	RedlockLock:   "Redlock's independent masters",
	ZooKeeperLock: "a ZooKeeper ensemble",
}

// Label says what locks of kind k run on, in words.
func (k LockKind) Label() string {
	if l, ok := kindLabels[k]; ok {
		return l
	}
	return string(k)
}

// Stores are the kinds of lock a scenario is a lesson for.
type Stores []LockKind

// The stores the catalog's lessons are for.
var (
	EtcdOnly    = Stores{EtcdLock}                           // its faults or its workload are etcd's
	Shared      = Stores{EtcdLock, RedisLock, ZooKeeperLock} // its script runs on etcd, a Redis primary and ZooKeeper alike
	RedisOnly   = Stores{RedisLock}                          // a lesson of a Redis primary (its failover)
	RedlockOnly = Stores{RedlockLock}                        // a lesson of Redlock's independent masters
	// EtcdAndZooKeeper: its faults are etcd's and ZooKeeper's (an answer
	// lost off the wire, a session ended by its timeout).
	EtcdAndZooKeeper = Stores{EtcdLock, ZooKeeperLock}
	// ZooKeeperOnly: a lesson of ZooKeeper's (a request lost off its wire,
	// its leader killed under a holder and a waiter).
	ZooKeeperOnly = Stores{ZooKeeperLock}
)

// For reports whether the lessons are for a lock of kind k. No kinds at
// all (a Scenario's zero value) means etcd's.
func (st Stores) For(k LockKind) bool {
	if len(st) == 0 {
		return k == EtcdLock
	}
	return slices.Contains(st, k)
}

// String says what the lessons are for, in words: "etcd, one Redis
// primary and a ZooKeeper ensemble".
func (st Stores) String() string {
	if len(st) == 0 {
		st = EtcdOnly
	}
	labels := make([]string, len(st))
	for i, k := range st {
		labels[i] = k.Label()
	}
	if n := len(labels); n > 1 {
		return strings.Join(labels[:n-1], ", ") + " and " + labels[n-1]
	}
	return labels[0]
}

// NotFor says why s is no lesson for a lock of kind k, "" when it is one.
// A gate or a run leaves such a pair out — a lesson of another store says
// nothing about the lock — and says so; it is never a failure.
func (s Scenario) NotFor(k LockKind) string {
	if s.Stores.For(k) {
		return ""
	}
	return s.Name + " is a lesson for " + s.Stores.String() + ", not for a lock on " + k.Label()
}
