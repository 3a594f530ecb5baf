package main

import (
	"context"
	"strings"

	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/script"
)

// storeMembers is how many servers an exploration of a lock of a store
// other than the default one runs on (a primary and two replicas, an
// ensemble of three): a member name for each of three clients.
const storeMembers = 3

// exploreLock is the lock an exploration draws scripts for, as its store
// runs it.
type exploreLock struct{ l scenarios.BackendLock }

// full is the grant shape an exploration takes a lock's to be.
var full = scenarios.GrantShape{Token: true, Key: true}

// resources are the resources the lock's runs can protect.
func (l exploreLock) resources() []string {
	ran, _ := l.l.Store(nil, full).Resources(resource.Names())
	return ran
}

// onDefault reports whether the lock is the default store's (etcd's:
// --members and --endpoints are its).
func (l exploreLock) onDefault() bool { return l.l.Kind.Name == scenarios.DefaultKind().Name }

// opener opens each case's run of the lock on servers, one case after
// another (nil: on servers its store starts for each case), protecting
// resources — every one the lock's runs can, as a run of the script the
// case leaves does, so that it runs again as written.
func (l exploreLock) opener(servers scenarios.Servers, resources []string) func(context.Context, string, int) (explore.Engine, error) {
	return func(ctx context.Context, runID string, ttl int) (explore.Engine, error) {
		return l.l.OpenCaseOn(ctx, servers, runID, ttl, resources)
	}
}

// lookupAnyLock finds a registered store's lock (a built-in or a
// known-bad one) by name.
func lookupAnyLock(lk string) (exploreLock, error) {
	if l, ok := scenarios.LookupBackendLock(lk); ok {
		return exploreLock{l}, nil
	}
	return exploreLock{}, usagef("--lock: unknown lock %q (locks: %s)", lk, strings.Join(backendLocks(), ", "))
}

// drawable are the fault kinds of kinds an exploration of a lock on a
// store that can do can draw on leases of ttl seconds, on the user's
// cluster (external) or not; a kind asked for by name (all false) that
// cannot be drawn is a usage error saying why.
func drawable(kinds []string, all, external bool, can script.Capabilities, ttl int) ([]string, error) {
	cannot := func(k string) string {
		switch lacks := can.Lacks(script.WalkNeeds(k, ttl)); {
		case len(lacks) > 0:
			return "the lock's store cannot " + lacks[0].Words()
		case k == script.WalkIsolate && external:
			return "the lab cannot cut the members of your own cluster off from each other"
		case k == script.WalkSlow && ttl < 3:
			return "a slow link is drawn only on leases of 3 s or more (--ttl 3)"
		}
		return ""
	}
	var out []string
	for _, k := range kinds {
		why := cannot(k)
		switch {
		case why == "":
			out = append(out, k)
		case !all:
			return nil, usagef("--faults %s: %s", k, why)
		}
	}
	return out, nil
}
