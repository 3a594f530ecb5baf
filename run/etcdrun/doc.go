// Package etcdrun is one run of a lock on one etcd cluster: the etcd store
// of the run engine (run/engine), which does the clients, the recording,
// the critical section, background steps, pauses, crashes and the faults
// on the clients' links. Each client is a cluster.Client behind a link of
// its own; what the engine asks of the store — links, the lock, whether a
// grant still stands, the session a lock rests on — is etcd's lease and
// key reads, and its own faults (a member isolated, killed; a lease
// expired; an answer held) are the cluster's, through etcdfaults.Nemesis on the
// engine's one timeline. Env is a script.Target and a run.Faulter.
//
// Where things are:
//   - env.go: Env, New, Close; each client's connection state
//   - store.go: the Env as the engine's Store and its hooks (a session the
//     server ended, a grant's key checked, the etcd-guarded connection,
//     answers counted, a waiter shown by its key, a crash)
//   - ops.go: a grant's key read at its revision, the holders looked at
//     after a release, the keys a run left
//   - locker.go: a client's Locker made (after a crash, a session ended)
//     and the patience it is given
//   - lease.go: the leases the lab follows: checkLease, the one place the
//     server's word on a lease is taken in and a loss recorded (waits and
//     the engine's sweep poll through it); expire
//   - faults.go: the cluster's faults: isolate, kill, answers held, and
//     Fault for the workloads
//   - answers.go: an acquire or release whose answer is lost
//   - workload.go, leaderless.go: the workloads and leader watch on etcd
package etcdrun
