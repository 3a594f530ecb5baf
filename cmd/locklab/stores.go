package main

// The stores locklab runs locks on: each registers itself (see
// scenarios.Backend; bench.Store for locklab bench), etcd's as the default
// store; every command reads them from the registries. A new store is one
// more import here (two with its bench).
import (
	_ "github.com/locklab/locklab/bench/redisbench"     // Redis's locks in locklab bench
	_ "github.com/locklab/locklab/bench/zkbench"        // ZooKeeper's locks in locklab bench
	_ "github.com/locklab/locklab/scenarios/etcdstore"  // etcd, embedded or the user's
	_ "github.com/locklab/locklab/scenarios/redisstore" // Redis: a primary with replicas, Redlock's masters
	_ "github.com/locklab/locklab/scenarios/zkstore"    // ZooKeeper
)
