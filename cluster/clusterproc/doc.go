// Package clusterproc runs an embedded etcd cluster in a child process, so
// that the CPU time the cluster spends can be told apart from the CPU time
// of the clients that use it (both in one process cannot be).
//
// The child is the running program itself, started again with an
// environment variable set: a program that uses Start must call Serve first
// thing in main (and a test binary in TestMain), which turns the process
// into the cluster server when the variable is set and returns otherwise.
//
// The parent talks to the child over its standard input and output: the
// child prints one JSON line with the endpoints once the cluster serves,
// then answers "cpu" with its own CPU time; when its standard input closes —
// Close, or the parent dying — it closes the cluster and exits.
package clusterproc
