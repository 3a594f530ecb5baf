// Package knownbad holds bugs the lab's known-bad locks are made of that
// belong to no store: each wraps a correct lock of any store and breaks
// one promise of lock.Locker's contract, so that every store's catalog can
// show that its lessons catch it.
//
// Where things are:
//   - knownbad.go: IgnoringDeadline (an Acquire waited on with a context of
//     its own), its factory wrapper and its regression's description
package knownbad
