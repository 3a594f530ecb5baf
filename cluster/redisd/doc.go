// Package redisd runs real Redis servers for the lab: Debian's
// redis-server (7.x), started as child processes on loopback ports the
// kernel found free, each with a data directory of its own that Close
// removes. Two shapes: one primary with asynchronous replicas, and
// independent primaries for Redlock.
//
// Every client reaches a server through a proxy of its own (Link,
// PrimaryLink: cut, delayed, severed as the etcd members' links are), and
// every replica reaches the primary through one too (Replication), so that
// the lab can keep a write from reaching a replica before the primary dies.
// The lab's own reads go directly (Admin).
//
// Failover is done as Redis Sentinel does it, by its commands rather than
// by a Sentinel's election: Promote sends REPLICAOF NO ONE to the chosen
// replica and has the others follow it. The lab decides when, so a
// scenario's schedule stays a function of its seed.
//
// A client's commands can be read off its link as they pass (wire.go:
// Commands, Writes, Requests), so that the lab can stop a client between
// two commands of one operation.
//
// Where redis-server is not installed, Find and the Start functions return
// ErrNotInstalled, which says how to install it.
package redisd
