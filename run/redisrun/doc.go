// Package redisrun is one run of a Redis lock on real redis-server
// processes (cluster/redisd): the Redis engine beside the etcd one (run).
// It speaks the same script commands (it is a script.Target), records the
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
//   - env.go: the Env — New, its resources, Reports and Check, Close
//   - client.go: a client on its own proxied link, its renewals (AddClient,
//     Crash)
//   - ops.go: acquire, critical section, release, background steps
//   - faults.go: pause, cut, delay, blip, isolate, failover, heal
//   - monitor.go: each grant followed on the server: expiry, deletion,
//     keep-alives read off the client's link
package redisrun
