// Package zklock holds the locks on ZooKeeper the lab runs by name:
// zk-lock, the lock people use from Go — github.com/go-zookeeper/zk's Lock
// recipe as it ships (protected ephemeral-sequential nodes, each waiter
// watching the node before its own). A grant's key is its node, its
// fencing token the node's creation zxid, its lease the session that owns
// the node: the session's timeout is the lock's TTL, set on the client's
// connection by whoever makes it (the lab, for its clients).
//
// Beside it, the lab's own recipes: zk-herd (every waiter watching the
// lock's children), the known-bad zk-unprotected (a lost create asked again
// without a GUID), zk-persistent (its nodes persistent, not ephemeral) and
// zk-deaf (told of a lost session only by ZooKeeper's word). Their grants carry a Lost (told.go) closed once the client has had
// no session for a session timeout; zk-lock's, as it ships, carry none.
//
// They keep package lock's contract: a Factory is a lock.Factory of the
// client's own *zk.Conn.
package zklock
