// Package etcdrun is one run of a lock on one etcd cluster: its clients
// (each a cluster.Client behind a link of its own) and their lockers, the
// protected resources and one history per resource (run.Histories), all
// on one clock. Env is a script.Target and a run.Faulter.
//
// Where things are:
//   - env.go: Env, New, Close; clients, their lockers and crashes
//   - ops.go: one client's acquire, critical section and release;
//     deadline.go: an acquire waited for until its deadline and
//     history.DeadlineWait after, then abandoned; told.go: each grant's
//     Grant.Lost followed, and wait-told
//   - locker.go: a client's Locker made anew (after a crash, a session
//     ended) and the patience it is given
//   - faults.go: pauses, cuts, crashes and faults named by the run's clients
//   - lease.go: the leases the lab follows: checkLease, the one place the
//     server's word on a lease is taken in and a loss recorded (waits and
//     the lease monitor poll through it)
//   - answers.go, wait.go: an acquire or release whose answer is lost,
//     background steps, waiting for a client to queue, the check
//   - workload.go, leaderless.go: the workloads and leader watch on etcd
package etcdrun
