package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/lock/resource"
)

// Counters are the resources a store that keeps no key in etcd protects:
// the lab's own counters (etcd-guarded guards a write with the lock's key
// in etcd).
func Counters() []string { return []string{"unfenced", "fenced"} }

// NewCounters makes the counters names asks for, every one of Counters
// when none; a name none of them is refused, naming store.
func NewCounters(store string, names []string) ([]resource.Resource, error) {
	if len(names) == 0 {
		names = Counters()
	}
	var res []resource.Resource
	for _, name := range names {
		if !slices.Contains(Counters(), name) {
			return nil, fmt.Errorf("resource %q is not one a %s lock can protect here (resources: %s)",
				name, store, strings.Join(Counters(), ", "))
		}
		r, err := resource.NewResource(name, "")
		if err != nil {
			return nil, err
		}
		res = append(res, r)
	}
	return res, nil
}
