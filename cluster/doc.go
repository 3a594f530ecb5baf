// Package cluster runs etcd for the lab: members embedded in the process (or
// a user's own cluster, reached with Connect), with every link the lab wants
// to break passing through something it controls.
//
// An embedded member's peer and client addresses are loopback proxies
// (package netproxy) whose ports stay fixed for the cluster's life, while the
// member itself listens on fresh kernel-chosen ports each time it starts; so a
// member keeps its identity across Kill and Restart and no port is ever picked
// by hand. Each lab Client has its own etcd connection through its own proxy,
// so one client can be cut, delayed or paused while the others run.
//
// Where things are:
//   - cluster.go: Config, Cluster, Close; start.go: Start, Stop, Kill, Restart
//   - leader.go: Leader, WaitLeader, MoveLeader; partition.go: Partition, Heal
//   - client.go: Client and its link; pause.go: pause points, Pause, Resume
//   - wait.go: conditions read from the servers (lease gone, linearizable read)
//   - external.go: Connect to a cluster the lab does not own
package cluster
