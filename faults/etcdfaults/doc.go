// Package etcdfaults applies the lab's faults to an embedded etcd cluster
// (package cluster): a Nemesis kills, isolates and restarts members, cuts,
// delays and pauses clients, holds their answers and ends their leases,
// recording each fault's window on the run's timeline (faults.Windows, the
// same for every store). run/etcdrun is its one user; the other stores'
// run packages apply their own faults.
//
// Where things are:
//   - nemesis.go: Nemesis (New, NewOn, Apply, UndoAll, Active), the work of
//     each fault kind on the cluster (apply, applyToClient), and the wait
//     for a client's next keep-alive (ArmAtKeepAlive, KeepAliveWait)
package etcdfaults
