// Package pglock is the PostgreSQL locks: advisory locks as applications
// take them, through jackc/pgx — pg-session (pg_advisory_lock on a
// connection of its own), pg-try (pg_try_advisory_lock polled), pg-xact
// (pg_advisory_xact_lock for a transaction) — and the known-bad ones.
//
// A grant's Key is its advisory key (KeyString), its Lease the backend
// process of the session that holds it: an advisory lock lives as long as
// its session (or transaction), and the server ends a session that sits
// idle past its idle_session_timeout (idle_in_transaction_session_timeout
// in a transaction), which the lab sets, per client, to the lesson's TTL —
// the lease a PostgreSQL lock rests on. So a correct lock keeps its
// session alive while it holds (a query every TTL/3), and tells its holder
// (Grant.Lost) when a keep-alive finds the session gone. Its fencing token
// is a sequence's nextval taken while it holds the lock (Sequence): it
// grows with every grant, whoever takes it.
package pglock
