//go:build !linux

package etcdlock_test

// serveOrphan does nothing here: locks run as processes need Linux, and so
// do the tests that kill their lab.
func serveOrphan() {}
