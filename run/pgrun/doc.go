// Package pgrun is one run of a PostgreSQL lock on a real server
// (cluster/pgd): the PostgreSQL store of the run engine (run/engine), which
// does the clients, the recording, the critical section, background steps
// and the faults on the clients' links. It speaks the same script commands
// (a script.Target), records the same history and is judged by the same
// checks (models).
//
// What the lab reads from PostgreSQL stands where etcd's lease and key
// reads stand: a grant is alive while its session — the backend process
// the grant names as its lease — holds the advisory lock (pg_locks); the
// session is the lease, and the server ends one that sits idle for a TTL
// (each client connects with idle_session_timeout and
// idle_in_transaction_session_timeout set to the lesson's TTL). A lock
// gone while its session lives was released, or taken by another hand —
// the grant gone from the server. Every request on a client's link is
// activity that keeps its session from being idle: a keep-alive.
//
// Where things are:
//   - env.go: the Env — New, its links, the client's lock, Close
//   - monitor.go: each grant followed on the server; what wait-lease-gone
//     and wait-free ask of the store
//   - wire.go: each client's messages read off its link (its sessions'
//     backend processes, its keep-alives)
//   - capabilities.go: what a run on PostgreSQL can do; expire (the
//     server ends a client's session)
//   - faults.go: the servers' faults, where a run has a streaming replica:
//     isolate (the replication held), failover (the primary killed, the
//     replica promoted)
package pgrun
