package main

// The stores locklab runs locks on: each registers itself (see
// scenarios.Backend; bench.Store for locklab bench), etcd's as the default
// store; every command reads them from the registries. A new store is one
// more import here (two with its bench), and a flag for servers of the
// user's own if it takes them (registerStoreFlags).
import (
	"flag"

	_ "github.com/locklab/locklab/bench/pgbench"        // PostgreSQL's locks in locklab bench
	_ "github.com/locklab/locklab/bench/redisbench"     // Redis's locks in locklab bench
	_ "github.com/locklab/locklab/bench/zkbench"        // ZooKeeper's locks in locklab bench
	_ "github.com/locklab/locklab/scenarios/etcdstore"  // etcd, embedded or the user's
	_ "github.com/locklab/locklab/scenarios/pgstore"    // PostgreSQL
	_ "github.com/locklab/locklab/scenarios/redisstore" // Redis: a primary with replicas, Redlock's masters
	_ "github.com/locklab/locklab/scenarios/zkstore"    // ZooKeeper
)

// registerStoreFlags adds the flags that name a store's servers of the
// user's own (etcd's --endpoints and its TLS flags are clusterFlags).
func (f *runFlags) registerStoreFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.redis, "redis", "", "your own Redis for the Redis locks (host:port or redis:// URL; a comma list of masters for redlock) instead of one started per run")
}
