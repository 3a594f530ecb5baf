// Package etcdstore is etcd as a store of package scenarios: the locks of
// package etcdlock, the known-bad ones, a user's etcdlock.Factory and a
// lock run as a process on etcd, each configuration on an embedded
// cluster of the run's worker (restored between configurations) or on
// the user's own cluster (scenarios.Config.External). It registers itself
// as the default store when a program imports it: store.go is the
// backend, cluster.go the clusters it runs on, preflight.go the one grant
// a lock is tried with before a run.
package etcdstore
