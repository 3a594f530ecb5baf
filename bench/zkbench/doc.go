// Package zkbench is ZooKeeper as a store of package bench: its locks
// measured on an ensemble of three started for each lock. It registers
// itself when imported.
//
// zkbench.go is the store: the locks it measures by name, the ensemble
// each is measured on and its hand-off floor.
package zkbench
