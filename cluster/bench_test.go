package cluster_test

import (
	"fmt"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
)

// BenchmarkStart measures a cluster start until it has a leader and every
// member has joined, and its Close, for 1, 3 and 5 members.
func BenchmarkStart(b *testing.B) {
	for _, n := range []int{1, 3, 5} {
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			for b.Loop() {
				c, err := cluster.Start(b.Context(), cluster.Config{Members: n, Dir: dir})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				c.Close()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkClose measures Close of a 3-member cluster with a client connected.
func BenchmarkClose(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		b.StopTimer()
		c, err := cluster.Start(b.Context(), cluster.Config{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		cl, err := c.NewClient("c1", "m1")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cl.Etcd().Put(b.Context(), "k", "v"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c.Close()
	}
}

// BenchmarkRoundTrip measures what bounds a lock's hand-off: a write (one
// Raft commit), a linearizable read (one ReadIndex round) and a serializable
// read (the member alone), each from a lab client on the leader and on a
// follower, through the client's proxy as locks under test see it.
func BenchmarkRoundTrip(b *testing.B) {
	c, err := cluster.Start(b.Context(), cluster.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	leader, err := c.Leader(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	follower := c.Members()[0]
	if follower == leader {
		follower = c.Members()[1]
	}
	ops := []struct {
		name string
		do   func(b *testing.B, cli *clientv3.Client) error
	}{
		{"put", func(b *testing.B, cli *clientv3.Client) error { _, err := cli.Put(b.Context(), "k", "v"); return err }},
		{"get", func(b *testing.B, cli *clientv3.Client) error { _, err := cli.Get(b.Context(), "k"); return err }},
		{"get-serializable", func(b *testing.B, cli *clientv3.Client) error {
			_, err := cli.Get(b.Context(), "k", clientv3.WithSerializable())
			return err
		}},
	}
	for _, on := range []struct{ role, member string }{{"leader", leader}, {"follower", follower}} {
		cl, err := c.NewClient("rt-"+on.role, on.member)
		if err != nil {
			b.Fatal(err)
		}
		for _, op := range ops {
			b.Run(op.name+"/on="+on.role, func(b *testing.B) {
				for b.Loop() {
					if err := op.do(b, cl.Etcd()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
