// Package etcdlock holds the locks on etcd the lab runs by name: etcd's
// own Mutex and Election as they ship, the lab's adapters of them and its
// own locks, the known-bad locks that reproduce public bugs, and a lock of
// anyone's run as a program (Exec). Each keeps package lock's contract: a
// Factory (a lock.Factory of etcd's client) is handed the client's own
// etcd client; a Leaser says which lease keeps it alive.
//
// Where things are:
//   - locks.go: each lock described once (Lock: its line, factory, whether
//     it is the lab's adapter, what it fails as it ships); Locks, Find,
//     Builtin, Names, Adapters, Lookup read it
//   - etcdlock.go: Guard, and the session, release and clean-up the lab's
//     own locks share
//   - mutex.go: etcd-mutex, etcd's concurrency.Mutex as it ships, and
//     etcd-mutex-retry-safe, the lab's adapter of it (Lock.Weak says what
//     the first fails, Lock.Adapter marks the second)
//   - election.go: etcd-election, etcd's concurrency.Election as a lock as
//     it ships, and etcd-election-retry-safe, the lab's adapter of it
//   - queue.go: queue, the lab's revision-queue lock with a fast hand-off
//   - ttlpoll.go: ttl-poll, Redis' SET NX PX pattern on etcd
//   - singlekey.go: single-key-watch, every waiter on one key (the herd)
//   - regressions.go, renewer.go, stalereentry.go, freshkey.go, promises.go:
//     the known-bad locks (promises.go: ignores-deadline, lost-untold)
//   - exec.go: locks run as processes on etcd (Exec, the etcdctl lock,
//     OfferTool); execlock.go reads an etcd grant from a program's
//     answers. Package internal/proc drives the programs (process groups,
//     SIGSTOP, SIGKILL), which only Linux gives: elsewhere Exec says so
//
// The package builds on Linux, macOS and Windows and links no etcdctl:
// package lock/etcdctl offers it, for the programs that run the etcdctl
// lock.
package etcdlock
