package bench_test

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock/etcdlock"
)

// Measure the queue lock with one client on an embedded cluster: how fast it
// is varies by machine, what each acquire costs in requests does not.
func ExampleRun() {
	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Config{})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	res, err := bench.Run(ctx, c, bench.Config{Lock: "queue", Factory: etcdlock.NewQueue, Clients: 1, Acquires: 10})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d grants, %.0f requests each\n", res.Acquires, res.Requests)
	// Output: 10 grants, 2 requests each
}
