package etcdfaults_test

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/faults/etcdfaults"
)

// Killing the leader returns once a successor leads; undoing the fault
// restarts the same member on its own data directory.
func ExampleNemesis_Apply() {
	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Config{Members: 3})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	n := etcdfaults.New(c, faults.RecorderFunc(func(e faults.Event) {
		fmt.Println(e.Phase, e.Fault)
	}))
	in, err := n.Apply(ctx, faults.Fault{Kind: faults.KillLeader})
	if err != nil {
		panic(err)
	}
	now, _ := c.Leader(ctx)
	fmt.Println("a different member leads:", now != in.Target())
	_ = in.Undo(ctx)
	fmt.Println("killed member back:", c.Running(in.Target()))
	// Output:
	// start kill-leader
	// a different member leads: true
	// end kill-leader
	// killed member back: true
}
