// Package shards checks that the parts of a split piece of work, gathered
// again, are each there once.
//
// Where things are: shards.go, the check of the gathered parts.
package shards
