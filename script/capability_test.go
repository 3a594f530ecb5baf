package script_test

import (
	"fmt"

	"github.com/locklab/locklab/script"
)

// What a script needs of a store is read from its commands; a store that
// lacks one of them does not run it.
func ExampleNeeds() {
	steps, err := script.Parse("mine.txt", "client c1 member=m1\n----\nx\n\nexpire c1 mode=lapse\n----\nx\n\nwait-told c1\n----\nx\n")
	if err != nil {
		panic(err)
	}
	needs := script.Needs(steps)
	fmt.Println(needs)
	redisLike := script.Capabilities{script.OneStore: "a primary with replicas"}
	fmt.Println(redisLike.Lacks(needs))
	// Output:
	// [lapse told]
	// [lapse told]
}
