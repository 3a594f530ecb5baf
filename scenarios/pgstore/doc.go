// Package pgstore is PostgreSQL as a scenarios.Backend: importing it lets a
// run name the PostgreSQL locks (lock/pglock), each configuration on a
// server the run starts once and shares (cluster/pgd), under an advisory
// key of its own. A gate of a PostgreSQL lock imports it for
// locktest.Store("postgres").
package pgstore
