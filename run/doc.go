// Package run is what every store's run shares: the typed outcome of a
// step, the histories every fact is recorded on, the critical section,
// background steps, the following of a grant's Grant.Lost, the watchers of
// the lab's own machine (stalls, CPU starvation, members without a leader)
// and the workloads that drive a run through the Cycler and Faulter
// interfaces.
//
// Every step a client takes returns an Outcome: typed facts (granted with
// token t2, refused because its session expired, a write rejected as
// stale…). A script compares outcomes and a drawn walk learns from them;
// Outcome.String is the one place they become text.
//
// The stores' runs live in packages of their own: run/engine is the
// store-neutral engine, and run/etcdrun, run/redisrun and run/zkrun the
// etcd, Redis and ZooKeeper backends on it.
//
// Where things are:
//   - record.go: the histories, each fact recorded on every one
//   - section.go: one critical section on every resource
//   - outcome.go: Outcome, Failure, Write, and their rendering
//   - async.go, told.go, answers.go: background steps, Grant.Lost
//     followed and waited for, an answer held back (LoseAnswer)
//   - watch.go, leaderless.go: the stall, starvation and leader watchers
//   - cycle.go, contend.go, workload.go: contention (with a fault held
//     for phases) and slow holders, over a Cycler or Faulter
//   - timeouts.go: the operations' timeout, and Classify
package run
