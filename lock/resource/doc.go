// Package resource holds what a lock protects in the lab: a counter read
// and written in a critical section (CriticalSection) — unfenced (accepts
// every write), fenced (refuses a token older than one it has seen, for
// the read as for the write) and etcd-guarded (written in etcd only while
// the grant's lock key is unchanged) — and the pause points where a worker
// can be frozen on its way through.
package resource
