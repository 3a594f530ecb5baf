// Package resource holds what a lock protects in the lab: a counter read
// and written in a critical section (CriticalSection) — unfenced (accepts
// every write), fenced (refuses a token older than one it has seen, for
// the read as for the write) and each store's guarded counter (Kept,
// registered by the store's lock package: etcd-guarded, written in etcd
// only while the grant's lock key is unchanged; redis-guarded, in Redis
// only while the lock key holds the grant's value) — and the pause points
// where a worker can be frozen on its way through.
package resource
