package etcdlock_test

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
)

// The built-in locks by name, each giving a fencing token.
func ExampleLookup() {
	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Config{Members: 3})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	cl, _ := c.NewClient("c1", "m1")
	for _, name := range etcdlock.Names() {
		f, _ := etcdlock.Lookup(name)
		l, _ := f(cl.Etcd(), "example-"+name, lock.Options{TTL: 5})
		g1, _ := l.Acquire(ctx)
		_ = l.Release(ctx, g1)
		g2, _ := l.Acquire(ctx)
		_ = l.Release(ctx, g2)
		fmt.Printf("%-16s tokens grow: %v\n", name, g2.Token > g1.Token && g1.Token > 0)
		l.Close()
	}
	// Output:
	// etcd-mutex       tokens grow: true
	// queue            tokens grow: true
	// ttl-poll         tokens grow: true
	// single-key-watch tokens grow: true
	// etcd-election    tokens grow: true
	// etcdctl          tokens grow: true
}

// The known-bad locks are data: each names the public bug it reproduces and
// the scenarios that must catch it.
func ExampleLookupRegression() {
	r, ok := etcdlock.LookupRegression("etcd-22082")
	fmt.Println(ok, r.Scenarios, r.Check)
	// Output: true [retried-release] validity
}
