package redisrun

import "github.com/locklab/locklab/script"

// The stores a Redis run is on, by name, and what their locks run on:
// one primary with replicas, or Redlock's independent masters.
const (
	Store        = "redis"
	Label        = "one Redis primary"
	MastersStore = "redlock"
	MastersLabel = "Redlock's independent masters"
)

// Capabilities are what a run on Redis can do beyond every run's, each
// with how: on one primary with replicas, or (masters) on independent
// masters (see scenarios.StoreKind).
func Capabilities(masters bool) script.Capabilities {
	if masters {
		return script.Capabilities{
			script.Masters: "independent masters, the lock a majority of keys set with the same value",
		}
	}
	return script.Capabilities{
		script.OneStore:      "a primary that replicates to its replicas asynchronously",
		script.Failover:      "the primary killed and a replica promoted, as Sentinel does",
		script.IsolateMember: "a server's replication links cut",
	}
}
