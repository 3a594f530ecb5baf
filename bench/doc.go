// Package bench measures a lock under contention on a cluster: locks per
// second, how long an acquire waits, how long the lock takes to pass from one
// holder to the next, how often it goes back to the client that just
// released it, and how many etcd requests each acquire+release costs.
//
// Every client acquires and releases in a loop with an empty critical
// section unless told otherwise, so the numbers are the lock's own cost. Clients are lab clients
// (cluster.Client), spread over the members in turn, each with its own lease.
// A measurement also checks mutual exclusion the cheap way (two clients
// inside at once is an error): a benchmark that silently measured a broken
// lock would be worse than none.
//
// Run measures an etcd lock, RunRedis a Redis one (redis.go) and
// RunZooKeeper a ZooKeeper one (zk.go), each against its store's floor
// (Floor, RedisFloor, ZooKeeperFloor), its clients behind links of their
// own.
package bench
