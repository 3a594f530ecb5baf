package faults_test

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/faults"
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
	n := faults.New(c, faults.RecorderFunc(func(e faults.Event) {
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

// The same seed always gives the same schedule.
func ExampleGenerate() {
	s, _ := faults.Generate(faults.GenConfig{
		Seed:    1,
		Steps:   3,
		Kinds:   []faults.Kind{faults.KillLeader, faults.PauseClient, faults.Partition},
		Members: []string{"m1", "m2", "m3"},
		Clients: []string{"c1", "c2"},
		Points:  []string{"before-write"},
	})
	for _, st := range s.Steps {
		fmt.Printf("at %v: %v for %v\n", st.At, st.Fault, st.Hold)
	}
	// Output:
	// at 950ms: pause-client c1 at before-write for 1.33s
	// at 2.55s: kill-leader for 1.92s
	// at 5.28s: pause-client c1 at before-write for 1.18s
}
