package cluster_test

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/locklab/locklab/cluster"
)

// A client whose link is cut stops sending keep-alives, so the server lets its
// lease lapse while the client itself still believes its session is alive.
//
//	c1 ──proxy──╳── m1      c1's keep-alives stop at the cut
//	c2 ──proxy───── m1      c2 is untouched
//	                        server: c1's lease gone ~1.0–1.5 s later
func Example() {
	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Config{Members: 3})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	c1, _ := c.NewClient("c1", "m1")
	c2, _ := c.NewClient("c2", "m1")
	s1, _ := concurrency.NewSession(c1.Etcd(), concurrency.WithTTL(1))
	defer s1.Close()
	s2, _ := concurrency.NewSession(c2.Etcd(), concurrency.WithTTL(1))
	defer s2.Close()

	c1.Cut()
	if err := c.WaitLeaseGone(ctx, s1.Lease()); err != nil {
		panic(err)
	}
	alive1, _ := c.LeaseAlive(ctx, s1.Lease())
	alive2, _ := c.LeaseAlive(ctx, s2.Lease())
	fmt.Println("c1's lease alive on the server:", alive1)
	fmt.Println("c2's lease alive on the server:", alive2)
	c1.Heal()
	<-s1.Done()
	fmt.Println("after healing, c1 sees its session is over")
	// Output:
	// c1's lease alive on the server: false
	// c2's lease alive on the server: true
	// after healing, c1 sees its session is over
}

// Partition splits the members; the majority elects a leader of its own and
// the isolated member can no longer serve linearizable reads.
func ExampleCluster_Partition() {
	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Config{Members: 3})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	leader, _ := c.WaitLeader(ctx)
	_ = c.Partition([]string{leader}) // {leader} | {the other two}
	next, _ := c.WaitLeader(ctx, leader)
	_, err = c.LinearizableRead(ctx, leader)
	fmt.Println("new leader differs:", next != leader)
	fmt.Println("isolated member serves linearizable reads:", err == nil)
	_ = c.Heal()
	fmt.Println("after heal:", c.WaitLinearizableRead(ctx, leader) == nil)
	// Output:
	// new leader differs: true
	// isolated member serves linearizable reads: false
	// after heal: true
}
