// Package faults is the lab's nemesis: the things done to a cluster or a
// client to break a lock, as plain values.
//
// A Fault says what to do ("kill the leader", "pause c1 before its write");
// a Nemesis applies it to one cluster, resolving targets at that moment
// ("the leader" is m2), records its start and end on the run's clock through a
// Recorder, and returns an Injection whose Undo reverses it. Waiting for what
// a fault did (a new leader, a lease gone) is the cluster's job
// (cluster.WaitLeader, WaitLeaseGone): scenarios step on those facts, never
// on guessed sleeps.
//
// Where things are:
//   - fault.go: Kind, Fault, the catalog of kinds
//   - nemesis.go: Recorder, Event, Nemesis, Injection (apply and undo)
//   - history.go: ToHistory, the Recorder that writes into a history
package faults
