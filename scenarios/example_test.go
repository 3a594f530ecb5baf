package scenarios_test

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenarios"
)

// Gating your own lock in CI: give the runner your Factory under a name,
// pick the scenarios and the resources you protect, and expect every
// configuration to pass. Here the "user's lock" is the built-in queue lock.
func Example_gateYourLock() {
	var mine lock.Factory = lock.NewQueue
	sum, err := scenarios.Run(context.Background(), scenarios.Config{
		Scenarios:  []string{"paused-holder", "expire-while-waiting"},
		Locks:      []string{"mine"},
		Resources:  []string{"fenced", "etcd-guarded"},
		Factories:  map[string]lock.Factory{"mine": mine},
		Seed:       1,
		ExpectPass: true,
	})
	if err != nil {
		panic(err)
	}
	for _, r := range sum.Results {
		fmt.Printf("%s × %s: %s\n", r.Scenario, r.Resource, r.Verdict)
	}
	fmt.Println("exit status:", sum.ExitCode())
	// Output:
	// paused-holder × fenced: PASS
	// paused-holder × etcd-guarded: PASS
	// expire-while-waiting × fenced: PASS
	// expire-while-waiting × etcd-guarded: PASS
	// exit status: 0
}
