// Package testsize says how big the lab's own tests run. By default a test
// proves each thing once, at the size that proves it — one seed of a lesson
// per lock, a few seeds of each known-bad lock — so that `go test ./...`
// takes minutes on two cores. LOCKLAB_LONG=1 runs the campaign sizes the
// tests had before (20 seeds of every known-bad lock, every lock through
// every lesson's workload): what a long CI step or a release runs.
//
// Where things are: testsize.go, Long and Pick, and WaitBound (how many
// parallel tests of a waiting package run at once); idle_linux.go and
// idle_other.go, how idle the machine is.
package testsize
