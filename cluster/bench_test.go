package cluster_test

import (
	"fmt"
	"testing"

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
