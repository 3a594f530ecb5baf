// Package zkrun is one run of a ZooKeeper lock on a real ensemble
// (cluster/zkd): the ZooKeeper store of the run engine (run/engine), which
// does the clients, the recording, the critical section, background steps
// and the faults on the clients' links. It speaks the same script
// commands (a script.Target), records the same history and is judged by
// the same checks.
//
// What the lab reads from ZooKeeper stands where etcd's lease and key
// reads stand: a grant is its node, its lease the session owning the node;
// the session is alive while the leader's session tracker lists it, and a
// node gone while its session lives was deleted — the grant gone from the
// server (history.ObservedGrantGone).
//
// Where things are:
//   - env.go: the Env — New, its members and links, each client's session
//     and whether it waits (engine.WireReader, engine.Queueing)
//   - monitor.go: each grant followed on the ensemble; what wait-lease-gone
//     and wait-free ask of the store (gone, nodesLeft)
//   - faults.go: the ensemble's faults: isolate, kill (of a server, or of
//     the leader, and wait-served after it), expire (mode lapse: a
//     client's links cut until its session is gone)
//   - answers.go: a create's answer lost (engine.LostAnswers): writes
//     spotted off the wire, the node seen on the ensemble; the request
//     after it lost (engine.LostRequests): requests spotted off the wire
package zkrun
