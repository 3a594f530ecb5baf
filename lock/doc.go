// Package lock is what the lab judges: the Locker contract, the built-in
// locks, fencing tokens and the resources a lock protects.
//
// The contract is the same on every store. A Locker is one client's handle
// on one named lock. Acquire blocks until the lock is granted and returns a
// Grant: its key, the value it wrote there (where the store compares one),
// a fencing token the store orders (etcd: the revision at which the
// client's lock key was created; Redis: an INCR taken with the grant), the
// lease it rests on, and, where the lock can tell, a channel closed when
// the grant is lost. Release gives it back. A Factory builds Lockers from
// the store's client for the client's own link — a lock.EtcdFactory from
// an etcd client, a lock.Factory[[]*redis.Client] from Redis clients — so
// users can put their own lock under test in a few lines (see Example).
//
// Where things are:
//   - lock.go: Locker, Grant, Factory, Options, Leaser, the sentinel
//     errors, Builtin
//   - mutex.go: etcd-mutex, etcd's own concurrency.Mutex as it ships, and
//     etcd-mutex-retry-safe, the lab's adapter of it (Weaknesses says what
//     the first fails, Adapters names the second)
//   - queue.go: queue, the lab's revision-queue lock with a fast hand-off
//   - ttlpoll.go: ttl-poll, Redis' SET NX PX pattern on etcd
//   - singlekey.go: single-key-watch, every waiter on one key (the herd)
//   - election.go: etcd-election, etcd's concurrency.Election as a lock as
//     it ships, and etcd-election-retry-safe, the lab's adapter of it
//   - resource.go: unfenced, fenced and etcd-guarded counters; CriticalSection
//   - regressions.go, renewer.go, stalereentry.go, freshkey.go, promises.go:
//     the known-bad locks (promises.go: ignores-deadline, lost-untold)
//   - exec.go: locks run as processes (Exec, the line protocol, the etcdctl
//     lock, OfferTool); execlock.go reads an etcd grant from a program's
//     answers. Package internal/proc drives the programs (process groups,
//     SIGSTOP, SIGKILL), which only Linux gives: elsewhere Exec says so
//
// The package builds on Linux, macOS and Windows and links no etcdctl:
// package lock/etcdctl offers it, for the programs that run the etcdctl lock.
package lock
