package locktest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/scenarios"
	"github.com/locklab/locklab/script"
)

// gateFaults are the fault kinds the gate's exploration draws: those it
// drew before an isolated member and a slow link could be drawn, so that a
// seed draws the cases it drew then (30 cases of those find etcd-11456;
// with isolation drawn among them, they did not). The catalog's
// isolated-asks and slow-link scenarios, which the gate runs, make those
// faults. A lock on a store draws those of them the store can make
// (script.WalkFaultsOn).
var gateFaults = []string{script.WalkPause, script.WalkCut, script.WalkExpire, script.WalkCrash, script.WalkLostAcquire,
	script.WalkBlip}

// exploreLeftOut says why the exploration is not run for tg's lock ("" if
// it is): no cases asked for, or no resource it must keep safe.
func exploreLeftOut(cfg config, tg target) string {
	if cfg.cases == 0 {
		return ""
	}
	if len(safeOn(cfg, tg)) == 0 {
		why := fmt.Sprintf("no resource asked for (%s) is one a correct lock keeps safe under faults on %s "+
			"(the unfenced store's lesson is that a lease is not a lock)", strings.Join(cfg.resources, ", "), tg.store)
		if tg.tokenless {
			why += ", and the lock's grants carry no fencing token, which a fenced store needs"
		}
		return why
	}
	return ""
}

// safeOn are the resources the exploration's cases must keep safe: those
// asked for that a correct lock keeps safe and its grants can write to.
func safeOn(cfg config, tg target) []string {
	guarded := guardedOf(cfg.resources)
	ran, _ := tg.l.Store(nil, scenarios.GrantShape{Token: true, Key: true}).Resources(guarded)
	if tg.tokenless {
		ran = slices.DeleteFunc(ran, resource.NeedsToken)
	}
	return ran
}

// runExplore runs the bounded exploration; it returns 1 if cases ran.
func runExplore(t *testing.T, g *gate, cfg config, tg target) int {
	p := explore.Safe(safeOn(cfg, tg)...)
	ecfg := explore.Config{Lock: Name, Property: p, Cases: cfg.cases, Seed: cfg.seed, ShrinkTime: 30 * time.Second,
		Walk: script.WalkOptions{TTL: max(cfg.leaseScale, 1), Faults: gateFaults}}
	ecfg.Walk.Faults = script.WalkFaultsOn(tg.kind().Can, gateFaults, ecfg.Walk.TTL)
	servers, err := scenarios.CaseServers(t.Context(), scenarios.Config{External: cfg.external, Members: 3}, tg.store)
	if err != nil {
		t.Fatalf("locktest: explore: %v", err)
	}
	if servers != nil {
		defer servers.Close()
	}
	ecfg.Open = opener(tg, servers)
	res, err := explore.Run(t.Context(), ecfg)
	if err != nil {
		t.Fatalf("locktest: explore: %v", err)
	}
	if res.Failed == nil {
		t.Logf("%d drawn scripts kept %s (%s)", res.Cases, p.Name, res.Elapsed.Round(time.Millisecond))
		return 1
	}
	path := filepath.Join(t.ArtifactDir(), "shrunk.txt")
	if err := os.WriteFile(path, []byte(res.Failed.Script), 0o644); err != nil {
		t.Errorf("locktest: %v", err)
	}
	g.explored = fmt.Sprintf("broke %s at case %d, shrunk to %d actions: %s", p.Name, res.Cases,
		len(res.Failed.Actions), strings.Join(res.Failed.Actions, "; "))
	kept := "go test -artifacts keeps it as a file"
	if artifactsKept() {
		kept = "kept as " + path
	}
	t.Errorf("a drawn script broke %s at case %d: %s\nshrunk to %d actions: %s\nthe same cases again: go test -run '^%s$' (the seed is fixed by the options)\nthe script (%s):\n%s",
		p.Name, res.Cases, res.Message, len(res.Failed.Actions), strings.Join(res.Failed.Actions, "; "),
		regexpQuote(t.Name()), kept, res.Failed.Script)
	return 1
}

// opener opens each case of the lock on servers, one case after another
// (nil: on servers started for each), protecting every resource its
// grants can write to.
func opener(tg target, servers scenarios.Servers) func(context.Context, string, int) (explore.Engine, error) {
	st := tg.l.Store(servers, scenarios.GrantShape{Token: true, Key: true})
	resources, _ := st.Resources(resource.Names())
	if tg.tokenless {
		resources = slices.DeleteFunc(resources, func(r string) bool { return r == "fenced" })
	}
	return func(ctx context.Context, runID string, ttl int) (explore.Engine, error) {
		return tg.l.OpenCaseOn(ctx, servers, runID, ttl, resources)
	}
}
