// Package leaks names the goroutines a test's leak check (goleak) lets
// outlive a test because a library the lab uses leaves them behind by a
// bug of its own, each with where the bug is reported: the lab's own
// goroutines are never among them.
//
// Where things are:
//   - leaks.go: Known, the goleak options the packages that run those
//     libraries pass to goleak.VerifyTestMain
package leaks
