package script_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/script"
)

// A lost acquire is drawn only where it may be, on a free lock, and a
// walk that may not draw it names exactly the actions it named before it
// existed: the scripts its seeds draw stay the same.
func TestWalkDrawsLostAcquires(t *testing.T) {
	old := script.NewWalk(script.WalkOptions{Faults: []string{script.WalkPause, script.WalkCut, script.WalkExpire, script.WalkCrash}})
	for _, n := range old.Names() {
		assert.False(t, strings.HasPrefix(n, "lose-acquire"), n)
	}
	all := script.NewWalk(script.WalkOptions{})
	assert.Contains(t, all.Names(), "lose-acquire c2")
	assert.NotContains(t, all.Names(), "lose-acquire c1", "one client's acquires are lost; the closing acquire, c1's, finds its key")
	others := slices.DeleteFunc(all.Names(), func(n string) bool {
		return strings.HasPrefix(n, "lose-acquire") || strings.HasPrefix(n, "blip") || strings.HasPrefix(n, "isolate")
	})
	assert.Equal(t, old.Names(), others, "the other actions keep their order")

	// Allowed on a free lock, for c2, and not while c1 holds.
	w := script.NewWalk(script.WalkOptions{Faults: []string{script.WalkLostAcquire}})
	w.Take(w.Preamble(), nil)
	names := func() []string {
		var out []string
		for _, a := range w.Next() {
			out = append(out, a.Name)
		}
		return out
	}
	assert.Contains(t, names(), "lose-acquire c2")
	lost, _ := w.Pick(slices.Index(w.Names(), "lose-acquire c2"))
	assert.Equal(t, []string{"acquire c2 answer=lost"}, lost.Lines())
	acquire, _ := w.Pick(0)
	w.Take(acquire, nil)
	assert.NotContains(t, names(), "lose-acquire c2", "c1 holds the lock")

	drawn := 0
	for seed := range uint64(100) {
		lines := script.DrawScript(seed, script.WalkOptions{Faults: []string{script.WalkLostAcquire}}, 12)
		for i, l := range lines {
			if !strings.HasSuffix(l, " answer=lost") {
				continue
			}
			drawn++
			// On a free lock: every acquire before it was released.
			granted := 0
			for _, p := range lines[:i] {
				switch {
				case strings.HasPrefix(p, "acquire ") && !strings.Contains(p, "answer=") && !strings.Contains(p, "async"),
					strings.HasPrefix(p, "await "):
					granted++
				case strings.HasPrefix(p, "release "):
					granted--
				}
			}
			assert.Zero(t, granted, "seed %d: %s drawn while the lock is held:\n%s", seed, l, strings.Join(lines[:i+1], "\n"))
		}
		assert.Equal(t, "check", lines[len(lines)-1])
	}
	assert.Positive(t, drawn, "100 seeds drew no lost acquire")
}

// A blip is drawn for a holder: its link fails for 0.4 TTL, healed by
// itself, and it works on for 1.5 TTL; nothing waits for its lease. On
// leases of 3 s or more the link fails one way (hold-answers).
func TestWalkDrawsBlips(t *testing.T) {
	w := script.NewWalk(script.WalkOptions{Faults: []string{script.WalkBlip}, TTL: 2})
	w.Take(w.Preamble(), nil)
	acquire, _ := w.Pick(0)
	w.Take(acquire, nil)
	blip, ok := w.Pick(slices.Index(w.Names(), "blip c1"))
	assert.True(t, ok)
	assert.Equal(t, []string{"cut c1 for=800ms", "cs c1 work=3s"}, blip.Lines())
	assert.True(t, blip.IsFault())
	w.Take(blip, nil)
	for _, a := range w.Next() {
		assert.NotEqual(t, "wait-lease-gone c1", a.Name, "a blip dooms no lease")
		assert.NotEqual(t, "heal", a.Name, "a blip heals by itself")
	}

	// On 3 s leases the blip holds the answers from the holder's next
	// keep-alive: every renewer meets it at a renewal.
	w = script.NewWalk(script.WalkOptions{Faults: []string{script.WalkBlip}, TTL: 3})
	w.Take(w.Preamble(), nil)
	acquire, _ = w.Pick(0)
	w.Take(acquire, nil)
	blip, ok = w.Pick(slices.Index(w.Names(), "blip c1"))
	assert.True(t, ok)
	assert.Equal(t, []string{"hold-answers c1 for=1.2s", "cs c1 work=4.5s"}, blip.Lines())
}

// An isolated member is drawn for a holder alone on it while the others
// are idle; its ask from the cut-off side is predicted refused, and the
// action heals before it ends.
func TestWalkDrawsIsolation(t *testing.T) {
	names := func(w *script.Walk) []string {
		var out []string
		for _, a := range w.Next() {
			out = append(out, a.Name)
		}
		return out
	}
	w := script.NewWalk(script.WalkOptions{Faults: []string{script.WalkIsolate}})
	w.Take(w.Preamble(), nil)
	assert.NotContains(t, names(w), "isolate c1", "nobody holds")
	acquire, _ := w.Pick(0)
	w.Take(acquire, nil)
	require.Contains(t, names(w), "isolate c1")
	iso, ok := w.Pick(slices.Index(w.Names(), "isolate c1"))
	require.True(t, ok)
	assert.Equal(t, []string{"isolate member=m1", "wait-lease-gone c1", "acquire c1", "heal"}, iso.Lines())
	assert.True(t, iso.IsFault())
	w.Take(iso, nil)
	assert.Contains(t, names(w), "acquire c1", "c1's ask was refused: it holds nothing, and nothing is cut off")
	assert.NotContains(t, names(w), "cs c1")

	// Not while another client waits, nor on one member.
	w = script.NewWalk(script.WalkOptions{Faults: []string{script.WalkIsolate}})
	w.Take(w.Preamble(), nil)
	w.Take(acquire, nil)
	wait, ok := w.Pick(slices.Index(w.Names(), "wait c2"))
	require.True(t, ok)
	w.Take(wait, nil)
	assert.NotContains(t, names(w), "isolate c1", "c2 waits")
	one := script.NewWalk(script.WalkOptions{Members: 1, Faults: []string{script.WalkIsolate}})
	one.Take(one.Preamble(), nil)
	one.Take(acquire, nil)
	assert.NotContains(t, names(one), "isolate c1", "one member has no quorum to lose")
}

// A slow link is drawn only on leases of 3 s or more, for a holder, as a
// delay of 2/15 TTL while it works two TTLs, then the heal.
func TestWalkDrawsSlowLinks(t *testing.T) {
	short := script.NewWalk(script.WalkOptions{Faults: []string{script.WalkSlow}})
	for _, n := range short.Names() {
		assert.False(t, strings.HasPrefix(n, "slow"), "1 s leases: %s", n)
	}
	w := script.NewWalk(script.WalkOptions{Faults: []string{script.WalkSlow}, TTL: 3})
	w.Take(w.Preamble(), nil)
	acquire, _ := w.Pick(0)
	w.Take(acquire, nil)
	slow, ok := w.Pick(slices.Index(w.Names(), "slow c1"))
	require.True(t, ok)
	assert.Equal(t, []string{"delay c1 by=400ms", "cs c1 work=6s", "heal"}, slow.Lines())
	assert.True(t, slow.IsFault())
	w.Take(slow, nil)
	next := []string{}
	for _, a := range w.Next() {
		next = append(next, a.Name)
	}
	assert.Contains(t, next, "release c1", "c1 still holds")
}
