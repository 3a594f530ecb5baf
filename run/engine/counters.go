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
	return NewResources(store, names, Counters(), "")
}

// NewResources makes the resources names asks for, every one of allowed
// when none: the lab's counters, and a store's own (resource.KeptBy) with
// its counter kept at key. A name allowed does not hold is refused, naming
// store.
func NewResources(store string, names, allowed []string, key string) ([]resource.Resource, error) {
	if len(names) == 0 {
		names = allowed
	}
	var res []resource.Resource
	for _, name := range names {
		if !slices.Contains(allowed, name) {
			return nil, fmt.Errorf("resource %q is not one a %s lock can protect here (resources: %s)",
				name, store, strings.Join(allowed, ", "))
		}
		k := ""
		if _, kept := resource.KeptBy(name); kept {
			k = key
		}
		r, err := resource.NewResource(name, k)
		if err != nil {
			return nil, err
		}
		res = append(res, r)
	}
	return res, nil
}
