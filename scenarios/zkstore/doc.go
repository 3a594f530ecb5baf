// Package zkstore is ZooKeeper as a scenarios.Backend: importing it lets a
// run name the ZooKeeper locks (package zklock), each configuration on a
// ZooKeeper ensemble of three started for it (cluster/zkd), and a gate
// take a user's Go lock on ZooKeeper (locktest.Store("zookeeper")). A
// program that does not import it links no ZooKeeper client.
package zkstore
