package engine_test

import (
	"context"
	"fmt"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run/engine"
)

// A run on a store of one's own: the engine does the clients, their steps
// and the histories; the store (here one held in memory) its links, its
// lock and what it says of a grant.
func ExampleNew() {
	fenced, _ := resource.NewResource("fenced", "")
	e, err := engine.New(engine.Config{Store: &memStore{made: map[string]int{}},
		Resources: []resource.Resource{fenced}, Options: lock.Options{TTL: 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Finish(context.Background(), nil, nil)
	ctx := context.Background()
	e.AddClient(ctx, "c1", "m1")
	for _, step := range []func() (fmt.Stringer, error){
		func() (fmt.Stringer, error) { return e.Acquire(ctx, "c1") },
		func() (fmt.Stringer, error) { return e.CSWork(ctx, "c1", 0) },
		func() (fmt.Stringer, error) { return e.ReleaseGrant(ctx, "c1", "") },
	} {
		out, _ := step()
		fmt.Println(out)
	}
	reports, _ := e.Reports()
	fmt.Println(e.Resources()[0], reports[0].Result())
	// Output:
	// c1: granted token=t1
	// c1: fenced read 0 wrote 1
	// c1: released
	// fenced PASS
}
