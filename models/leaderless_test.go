package models_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// A step that went otherwise than its script while a member was without
// its leader, in a run whose schedule reaches no member, is the machine's: the
// environment says ERROR with the span as evidence, and the run is run
// again. With a fault that reaches the members (a partition), the span is
// the schedule's, and the step gone astray is the run's ERROR, not the
// environment's.
func TestALeaderlessClusterWithoutAFaultIsTheEnvironments(t *testing.T) {
	span := history.Event{Time: ms(4500), Type: history.Observed, What: history.ObservedLeaderless, Member: "m2",
		StalledFrom: ms(3100)}
	partition := &history.FaultSpec{Kind: history.FaultPartition, Groups: [][]string{{"m1"}, {"m2", "m3"}}}
	cut := &history.FaultSpec{Kind: history.FaultCutClient, Client: "c1"}
	fault := func(spec *history.FaultSpec) []history.Event {
		return []history.Event{
			{Time: ms(1000), Type: history.FaultStart, ID: 1, Fault: spec.String(), Spec: spec},
			{Time: ms(2000), Type: history.FaultEnd, ID: 1, Fault: spec.String(), Spec: spec},
		}
	}
	for _, tc := range []struct {
		name   string
		events []history.Event
		env    models.Result
	}{
		{"no fault", with(build(granted, nil, nil), span, runErr), models.Error},
		{"a client's link cut", with(build(granted, nil, nil), append(fault(cut), span, runErr)...), models.Error},
		{"a partition", with(build(granted, nil, nil), append(fault(partition), span, runErr)...), models.Pass},
		{"no span", with(build(granted, nil, nil), runErr), models.Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, _, j, err := models.JudgeHistory(history.Header{}, tc.events, time.Second)
			require.NoError(t, err)
			assert.Equal(t, tc.env, rep.Environment.Result, rep.Environment.Explanation)
			assert.Equal(t, models.Error, j.Verdict, "a step gone astray is never a PASS")
			if tc.env == models.Error {
				assert.Contains(t, rep.Environment.Explanation, "a step went otherwise than its script (step 4 acquire c2")
				assert.Contains(t, rep.Environment.Explanation, "m2 was without its leader from 3.1s to 4.5s into the run")
				assert.Equal(t, []string{"m2 was without its leader from 3.1s to 4.5s into the run"}, rep.Environment.Evidence)
			}
		})
	}
}
