// Package piddir makes temporary directories that carry the number of the
// process that made them, and removes those whose process has died: a run
// killed with SIGKILL cannot remove its own directories (an embedded
// cluster's data, a lock process's), so the next run on the machine does.
//
// Where things are:
//   - piddir.go: Make, Sweep and the names they read
//   - dead_unix.go, dead_other.go: whether a process still runs (unix asks
//     the kernel; elsewhere every process is taken to run, and nothing is
//     removed)
package piddir
