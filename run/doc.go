// Package run is one run of a lock on one cluster: its clients and their
// lockers, the three protected resources and one history per resource,
// all on one clock, and the workloads that drive them.
//
// Every step a client takes returns an Outcome: typed facts (granted with
// token t2, refused because its session expired, a write rejected as
// stale…). A script compares outcomes and a drawn walk learns from them;
// Outcome.String is the one place they become text.
//
// Where things are:
//   - env.go: Env, New, Close; clients, their lockers and crashes
//   - record.go: the histories, each fact recorded on every one
//   - ops.go: one client's acquire, critical section and release;
//     deadline.go: an acquire waited for until its deadline and
//     history.DeadlineWait after, then abandoned; told.go: each grant's
//     Grant.Lost followed, and wait-told
//   - faults.go: pauses, cuts, crashes and faults named by the run's clients
//   - lease.go: the leases the lab follows: checkLease, the one place the
//     server's word on a lease is taken in and a loss recorded (waits and
//     the lease monitor poll through it), and the stall watcher
//   - wait.go: background steps, waiting for a client to queue, a release
//     whose answer is lost, the check
//   - workload.go: contention (with a fault held for phases) and slow holders
//   - outcome.go: Outcome, Failure, Write, and their rendering
package run
