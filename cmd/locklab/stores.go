package main

// The stores locklab runs locks on: each registers itself (see
// scenarios.Backend), etcd's as the default store; every command reads
// them from the registry. A new store is one more import here.
import (
	_ "github.com/locklab/locklab/scenarios/etcdstore"  // etcd, embedded or the user's
	_ "github.com/locklab/locklab/scenarios/redisstore" // Redis: a primary with replicas, Redlock's masters
	_ "github.com/locklab/locklab/scenarios/zkstore"    // ZooKeeper
)
