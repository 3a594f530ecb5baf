// Package pgbench is PostgreSQL as a store of package bench: its locks
// measured on a server started for each lock, each client on a link of its
// own, measured through bench.RunContenders (bench knows nothing of
// PostgreSQL). It registers itself when imported.
package pgbench
