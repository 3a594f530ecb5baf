package registry_test

import (
	"fmt"

	"github.com/locklab/locklab/internal/registry"
)

// Values come back in the order added, the first-added-first before.
func ExampleList() {
	var l registry.List[string]
	l.Add("redis")
	l.Add("zookeeper")
	l.AddFirst("etcd")
	all := l.All()
	all[0] = "changed" // a copy: the registry keeps its own
	fmt.Println(l.All())
	// Output: [etcd redis zookeeper]
}
