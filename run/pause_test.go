package run_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/run"
)

// A pause is armed at once, taken hold of in the background, waited for,
// and ended by Resume or by the end of its process — its window on the
// timeline from the first to the last.
func TestAPauseIsArmedWaitedForAndEnded(t *testing.T) {
	var faultsSeen []faults.Phase
	w := faults.NewWindows(faults.RecorderFunc(func(ev faults.Event) { faultsSeen = append(faultsSeen, ev.Phase) }))
	apply := func() (*faults.Injection, error) {
		return w.Apply(t.Context(), faults.Fault{Kind: faults.PauseClient, Client: "c1", Point: "any"},
			func(_ context.Context, in *faults.Injection) error { in.SetTarget("before-write"); return nil })
	}
	var p run.Pause
	_, err := p.Wait(t.Context(), "c1")
	assert.ErrorContains(t, err, "c1 has no pause armed")
	_, err = p.Resume(t.Context(), "c1")
	assert.ErrorContains(t, err, "c1 is not paused")
	assert.NoError(t, p.End(t.Context()), "no pause: nothing to end")

	assert.Equal(t, run.WillPause, p.Arm("c1", "any", apply).Kind)
	out, err := p.Wait(t.Context(), "c1")
	require.NoError(t, err)
	assert.Equal(t, run.Outcome{Kind: run.Paused, Client: "c1", Point: "before-write"}, out)
	out, err = p.Resume(t.Context(), "c1")
	require.NoError(t, err)
	assert.Equal(t, run.Resumed, out.Kind)

	p.Arm("c1", "any", apply)
	_, err = p.Wait(t.Context(), "c1")
	require.NoError(t, err)
	require.NoError(t, p.End(t.Context()))
	_, err = p.Resume(t.Context(), "c1")
	assert.ErrorContains(t, err, "c1 is not paused", "the crash ended it")
	assert.Equal(t, []faults.Phase{faults.Start, faults.End, faults.Start, faults.End}, faultsSeen)
}
