// Package redisbench is Redis as a store of package bench: its locks
// measured on a primary with two replicas, or on Redlock's independent
// masters, started for each lock. It registers itself when imported.
//
// redisbench.go is the store: the locks it measures by name, the servers
// each is measured on and their hand-off floor.
package redisbench
