// Package redisrun is one run of a Redis lock on real redis-server
// processes (cluster/redisd): the Redis store of the run engine
// (run/engine), which does the clients, the recording, the critical
// section, background steps and the faults on the clients' links. It
// speaks the same script commands (it is a script.Target), records the
// same history — each grant's key expiry stands for the lease the grant
// rests on — and is judged by the same checks (models).
//
// What the lab reads from Redis stands where etcd's lease and key reads
// stand: a grant is alive while its key holds its value on the primary
// (on a majority of Redlock's masters); a key gone before its expiry was
// deleted, not expired, and is recorded as the grant gone from the server
// (history.ObservedGrantGone). Keep-alives are read off each client's own
// link: a request carrying a held grant's value is the lock renewing it
// (or releasing it).
//
// Where things are:
//   - env.go: the Env — New, its members and links, Close
//   - monitor.go: each grant followed on the server: expiry, deletion,
//     keep-alives read off the client's link; what wait-lease-gone and
//     wait-free ask of the store (gone, left)
//   - faults.go: the Redis servers' faults: isolate, failover
//   - capabilities.go: what a run on Redis can do, and the commands read
//     off each client's link (RESP) that stop a client between the
//     commands of its acquire or release
package redisrun
