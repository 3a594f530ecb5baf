package explore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/models"
)

// Property is what every case of an exploration must satisfy.
type Property struct {
	// Name names it in messages ("counter-linearizes").
	Name string
	// Holds returns nil if c satisfies it, else what is wrong.
	Holds func(c *Case) error
}

// checksPass is a property that the named checks PASS on the named
// resources (a check that could not decide does not pass) of a case that
// made progress.
func checksPass(name string, resources []string, checks ...string) Property {
	return Property{Name: name, Holds: func(c *Case) error {
		if !c.Progressed {
			// A case after which the lock never granted again shows
			// nothing either way: it does not count as holding.
			return fmt.Errorf("the lock did not grant again after every fault had healed: the case shows nothing")
		}
		var bad []string
		for _, r := range resources {
			rep, ok := c.Reports[r]
			if !ok {
				continue
			}
			for _, v := range rep.Safety {
				if slices.Contains(checks, v.Check) && v.Result != models.Pass && v.Result != models.NotApplicable {
					bad = append(bad, fmt.Sprintf("%s: %s %s: %s", r, v.Check, v.Result, v.Explanation))
				}
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("%s", strings.Join(bad, "\n"))
		}
		return nil
	}}
}

// guarded are the resources a correct lock keeps correct.
var guarded = []string{"fenced", "etcd-guarded"}

var allResources = []string{"unfenced", "fenced", "etcd-guarded"}

// The properties a correct lock keeps under every drawn schedule.
var (
	// CounterLinearizes: the fenced and etcd-guarded counters' histories
	// linearize (Porcupine).
	CounterLinearizes = checksPass("counter-linearizes", guarded, "counter")
	// TokensGrow: every grant's fencing token is larger than the ones
	// before it.
	TokensGrow = checksPass("tokens-grow", allResources, "tokens")
	// NoStaleWrite: no fenced or guarded store accepted a write from an
	// older grant after a newer one.
	NoStaleWrite = checksPass("no-stale-write", guarded, "stale-writes")
	// NoExpiredWaiterGranted: no waiter whose lease had ended was granted.
	NoExpiredWaiterGranted = checksPass("no-expired-waiter-granted", allResources, "expired-waiter")
	// GrantsValid: no grant overlapped another's validity, and every lease
	// a grant rests on lived while nothing excused its end.
	GrantsValid = checksPass("grants-valid", allResources, "validity", "lease-kept")
	// ProgressAfterHeal: once every fault had healed and every holder had
	// released, the lock granted again.
	ProgressAfterHeal = Property{Name: "progress-after-heal", Holds: func(c *Case) error {
		if !c.Progressed {
			return fmt.Errorf("the lock did not grant again after every fault had healed")
		}
		return nil
	}}
)

// Safe is the property that every safety check PASSes on the resources
// (and, as for every check property, the lock grants again once faults
// heal).
func Safe(resources ...string) Property {
	names := []string{"counter", "tokens", "stale-writes", "validity", "expired-waiter", "lease-kept"}
	return checksPass("safe on "+strings.Join(resources, ", "), resources, names...)
}
