package scenarios_test

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
	_ "github.com/locklab/locklab/scenarios/etcdstore" // etcd, the store of an etcdlock.Factory
)

// Gating your own lock in CI: give the runner your Factory under a name,
// pick the scenarios and the resources you protect, and expect every
// configuration to pass. Here the "user's lock" is the built-in queue lock.
func Example_gateYourLock() {
	var mine etcdlock.Factory = etcdlock.NewQueue
	sum, err := scenarios.Run(context.Background(), scenarios.Config{
		Scenarios:  []string{"paused-holder", "expire-while-waiting"},
		Locks:      []string{"mine"},
		Resources:  []string{"fenced", "etcd-guarded"},
		Factories:  map[string]etcdlock.Factory{"mine": mine},
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

// A scenario's effects are checked over a history alone. This paused-holder
// history has c1 paused, but its pause ended before its lease did: nothing
// the scenario teaches happened, so a run that recorded it is ERROR.
func ExampleScenario_CheckEffects() {
	s, _ := scenarios.Lookup("paused-holder")
	events := []history.Event{
		{Time: 0, Type: history.Observed, What: history.ObservedConnected, Client: "c1", Member: "m1"},
		{Time: 1, Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire},
		{Time: 2, Type: history.Ok, ID: 1, Client: "c1", Op: history.Acquire, Token: 5, Lease: 7},
		{Time: 3, Type: history.FaultStart, ID: 1, Fault: "pause-client c1 at before-write"},
		{Time: 4, Type: history.FaultEnd, ID: 1, Fault: "pause-client c1 at before-write"},
	}
	for _, ef := range s.CheckEffects(events) {
		fmt.Printf("%v: %s\n", ef.Happened, ef.Name)
	}
	fmt.Println(models.Vacuous(s.CheckEffects(events)) != "")
	// Output:
	// false: c1's lease ended on the server while c1 was paused
	// false: c2 was granted the lock while c1 was paused
	// true
}
