//go:build !linux

package lock_test

// serveOrphan does nothing here: locks run as processes need Linux, and so
// do the tests that kill their lab.
func serveOrphan() {}
