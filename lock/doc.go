// Package lock is the contract every lock the lab judges keeps, on any
// store: a Locker, the Grant it gives (key, value, fencing token, lease,
// and a channel closed when it is lost), its Options, a Factory that makes
// one from the store's client for the client's own link, and the errors it
// answers with. Optional interfaces say more where a lock can: Poller (how
// often it polled), process.Program (a lock run as a program, which a
// pause freezes), and a store's own (etcdetcdlock.Leaser: the etcd lease it
// rests on). Regression describes a known-bad lock. The package imports no
// store's client.
//
// The locks live in packages of their own: lock/etcdlock (the built-in
// etcd locks, the lab's adapters of them and the known-bad ones, and locks
// run as programs on etcd; etcdlock.Factory), lock/redislock (the Redis
// locks), lock/zklock (the ZooKeeper locks); what a lock
// protects is lock/resource, the protocol of a lock run as a program
// lock/process. The package builds on Linux, macOS and Windows.
package lock
