// Package badlocks holds locks with one bug each, written against the
// lock contract alone as a user would write them, for the tests that show
// the lab catches what they do by the check that names it.
//
// Where things are:
//   - badlocks.go: a revision queue with one bug chosen per lock — Deaf (a
//     waiter that misses its wake-up) and Dup (a timed-out acquire that
//     leaves its key queued), both caught by the hand-off check
package badlocks
