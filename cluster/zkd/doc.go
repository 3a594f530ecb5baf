// Package zkd runs real ZooKeeper beside etcd and Redis: Debian's
// zookeeperd (its server jar, on the machine's JRE) started as an ensemble
// of child processes on free loopback ports, each with a data directory of
// its own, every link between two servers behind a proxy of the lab's (so
// that one can be isolated from the quorum while its clients still reach
// it) and every client reaching a server through a link of its own
// (Link). The lab reads the servers' own view of a session (SessionAlive,
// from the leader's session tracker) as it reads etcd's view of a lease.
// Nothing is left after Close, or after the lab dies: a server gets
// SIGKILL with it (internal/deathsig), its directory goes with the next
// run's sweep (internal/piddir). The servers log nothing unless asked
// (Options.Log). Where zookeeperd is not installed, Find says so.
//
// Where things are:
//   - server.go: one server process, its config and ports, Find
//   - ensemble.go: the Ensemble — Start, links, Kill and Restart,
//     Isolate, SessionAlive, Close
//   - wire.go: a client connection's frames read off the wire — its
//     writes, the requests it waits on, notifications, its session
//   - waits.go: Waits, whether a client is done asking and waits (every
//     request answered, the latest setting a watch)
//   - torn.go, cpu.go: a killed server's torn log; the servers' CPU time
package zkd
