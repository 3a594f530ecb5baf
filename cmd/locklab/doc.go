// Command locklab runs locks against real etcd clusters under faults and
// checks what happened. Run `locklab help` for the commands.
//
// Where things are:
//   - main.go: the commands, exit statuses and the one-line errors
//   - run.go: run (the flags, the runner, the report and locklab-out/latest)
//   - check.go: check (one history file judged as its run did) and replay
//   - explore.go: explore (drawn scripts, shrinking, the failing script)
//   - bench.go: bench (measurements, the cluster in a child process, the
//     plots)
//   - list.go: list and explain (the catalog, locks, faults)
package main
