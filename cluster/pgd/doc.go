// Package pgd is real PostgreSQL for the lab: Debian's postgresql (its
// initdb and postgres) started as a child process on a free loopback port,
// with a data directory of its own under the lab's directories — no system
// service, nothing left after Close, Ctrl-C or the lab's death (the kernel
// kills the server with the lab; the next run sweeps the directory). fsync
// is off: nothing the lab runs needs a disk safe against the machine's
// crash; synchronous_commit is on, so a server killed (Kill) keeps what it
// acknowledged — a sequence's nextval among it.
//
// Clients reach the server through a proxy each (Link), which the lab
// cuts, delays and pauses as on every store; the lab's own connections
// (Admin) go direct. PostgreSQL refuses to run as root: where the lab is
// root, the server runs as the postgres user Debian's package makes (or
// nobody), and its directory is handed to that user.
//
// A server can have a streaming replica (StartReplica: pg_basebackup, a
// hot standby streaming over a link the lab can cut) and fail over to it
// (FailOver: the primary killed, the replica promoted, the primary's links
// and Admin following it). A Pooler is Debian's pgbouncer in transaction
// mode in front of a server, for a lock whose clients reach it so.
//
// Where PostgreSQL is not installed, Start says so in one line, and how to
// install it.
package pgd
