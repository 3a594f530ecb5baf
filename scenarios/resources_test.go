package scenarios_test

import (
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/scenarios"
)

// resourcesOn are the resources a run of every resource gives a lock on
// the store of kind: the lab's own and the store's, none another store
// keeps.
func resourcesOn(kind scenarios.StoreKind) []string {
	var out []string
	for _, r := range resource.Names() {
		if k, ok := resource.KeptBy(r); !ok || k.Store == kind.Name {
			out = append(out, r)
		}
	}
	return out
}
