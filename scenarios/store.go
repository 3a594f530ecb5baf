package scenarios

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/clockshim"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/script"
)

// Kinds are the kinds of store a run can name, each once: each registered
// backend's, the default store's first, then in the order registered.
func Kinds() []StoreKind {
	var out []StoreKind
	for _, b := range Backends() {
		if k := b.Kind(); !slices.ContainsFunc(out, func(o StoreKind) bool { return o.Name == k.Name }) {
			out = append(out, k)
		}
	}
	return out
}

// storeNames are the names of the stores a run can name, for a message.
func storeNames() string {
	var names []string
	for _, k := range Kinds() {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

// GrantShape is what a lock's grants carry: a fencing token, and a key a
// write guarded by the lock's store can check (Grant.Token, Grant.Key);
// Tells, a Lost (Grant.Lost); Program, that the lock runs as a program the
// lab starts (its own clock, which the lab can move).
type GrantShape struct{ Token, Key, Tells, Program bool }

// ShapeOf is the shape of g, granted by l.
func ShapeOf(l lock.Locker, g lock.Grant) GrantShape {
	_, program := l.(process.Environ)
	return GrantShape{Token: g.Token != 0, Key: g.Key != "", Tells: g.Lost != nil, Program: program}
}

// clientClockSkip says why s, which moves a client's own clock, does not
// run for a lock of shape (and "" when it does, or s moves none): only a
// program's clock moves, and what the lesson watches is the lock telling
// its holder.
func clientClockSkip(ctx context.Context, s Scenario, shape GrantShape) (shim, why string) {
	if !s.movesClientClock() {
		return "", ""
	}
	switch {
	case !shape.Program:
		return "", "the lab moves a client's clock for a lock run as a program, with a small library preloaded into it; " +
			"a Go lock runs inside the lab's own process, on its clock"
	case !shape.Tells:
		return "", "the lock's grants carry no Lost (a program answers no tells=lost): the lesson is what the client's " +
			"clock does to the lock telling its holder, and this lock tells it nothing"
	}
	shim, err := clockshim.Build(ctx)
	if err != nil {
		return "", fmt.Sprintf("%v: the lab cannot move a client's clock", err)
	}
	return shim, ""
}

// shape is what lock's grants carry, as its preflight learnt; a lock whose
// grant was not learnt is taken to carry both (its lessons say otherwise
// if it does not).
func (cfg Config) shape(lock string) GrantShape {
	if s, ok := cfg.shapes[lock]; ok {
		return s
	}
	return GrantShape{Token: true, Key: true}
}

// shapesOf learns, for each lock of jobs that has a preflight, what its
// grants carry, from one grant on the servers ownOf gives its store (nil:
// servers of its own), alone there. A lock that was not granted is left
// out: its lessons will say why.
func shapesOf(ctx context.Context, jobs []job, ownOf func(kind string) Servers) map[string]GrantShape {
	out := map[string]GrantShape{}
	tried := map[string]bool{}
	for _, j := range jobs {
		if tried[j.lock] || j.l.Preflight == nil {
			continue
		}
		tried[j.lock] = true
		if shape, err := j.l.Preflight(ctx, ownOf(j.l.Kind.Name)); err == nil {
			out[j.lock] = shape
		}
	}
	return out
}

// faultsMembers reports whether s acts on the store's members — by its
// workload or a step of its script (isolate, kill, failover) — so that its
// servers cannot be shared with another configuration.
func (s Scenario) faultsMembers() bool {
	if s.MemberFaults {
		return true
	}
	steps, err := s.Script()
	return err != nil || slices.ContainsFunc(steps, func(st script.Step) bool {
		return slices.Contains([]string{"isolate", "kill", "failover"}, st.Cmd.Name)
	})
}

// LosesReleaseAnswer reports whether s's script cuts a release's answer
// (release answer=lost): the lab then watches the grant's key on the
// server to see the release take effect.
func (s Scenario) LosesReleaseAnswer() bool {
	steps, err := s.Script()
	return err == nil && slices.ContainsFunc(steps, func(st script.Step) bool {
		return st.Cmd.Name == "release" && st.Cmd.Answer != ""
	})
}

// tokenFindings lists the resources on which s's documented FAIL is one
// only a fencing token can show: its script's check step names no failed
// check but stale-writes and tokens for them ("unfenced: FAIL (stale-writes
// FAIL)": a late write that, without tokens, reads as one more increment).
func (s Scenario) tokenFindings() []string {
	steps, err := s.Script()
	if err != nil {
		return nil
	}
	other := func(check string) bool { return check != "stale-writes" && check != "tokens" }
	var out []string
	for _, d := range documentedVerdicts(steps) {
		if d.verdict == "FAIL" && len(d.failed) > 0 && !slices.ContainsFunc(d.failed, other) {
			out = append(out, d.resource)
		}
	}
	return out
}

// tokenless skips, for a lock whose grants carry no token (shape), the
// resources of ran that fence by one, and those on which s's finding
// needs one (see tokenFindings).
func tokenless(s Scenario, shape GrantShape, ran []string, skipped map[string]string) ([]string, map[string]string) {
	if shape.Token {
		return ran, skipped
	}
	for _, r := range ran {
		if resource.NeedsToken(r) {
			skipped[r] = "the lock's grants carry no fencing token (Grant.Token is zero; a program answers no token=), so a fenced store refuses " +
				"every write of its holders: the store cannot fence what it is not given"
		}
	}
	for _, r := range s.tokenFindings() {
		if slices.Contains(ran, r) {
			skipped[r] = "does not apply to this lock: the lesson's finding on " + r + " is a stale write, which only " +
				"a fencing token shows, and the lock's grants carry none (Grant.Token is zero)"
		}
	}
	return slices.DeleteFunc(ran, func(r string) bool { return skipped[r] != "" }), skipped
}

// DefaultKind is the default store's kind: the store registered by
// RegisterDefault (etcd's, when scenarios/etcdstore is linked), or else
// the first registered; a zero StoreKind when none is.
func DefaultKind() StoreKind {
	if ks := Kinds(); len(ks) > 0 {
		return ks[0]
	}
	return StoreKind{}
}

// KeptElsewhere says why resource r, which another store keeps, is not
// run for a lock on the store labelled label.
func KeptElsewhere(r, label string) string {
	k, ok := resource.KeptBy(r)
	if !ok {
		return r + " is not a resource a lock on " + label + " can protect"
	}
	in := k.Store
	for _, kind := range Kinds() {
		if kind.Name == k.Store {
			in = kind.Label
		}
	}
	return r + " guards a write with the lock's key in " + in + ": a lock on " + label + " keeps none there"
}
