package history_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// Every kind's spec names itself as the timeline shows it, and a format 1
// file — which recorded only that name — reads back as the same spec.
func TestFaultNamesReadBackAsSpecs(t *testing.T) {
	specs := []history.FaultSpec{
		{Kind: history.FaultPartition, Groups: [][]string{{"m1"}, {"m2", "m3"}}},
		{Kind: history.FaultHeal},
		{Kind: history.FaultIsolateMember, Member: "m2"},
		{Kind: history.FaultIsolateLeader},
		{Kind: history.FaultCutClient, Client: "c1"},
		{Kind: history.FaultDelayClient, Client: "c2", Delay: int64(50 * time.Millisecond)},
		{Kind: history.FaultKillMember, Member: "m3"},
		{Kind: history.FaultRestartMember, Member: "m3"},
		{Kind: history.FaultKillLeader},
		{Kind: history.FaultMoveLeader, Member: "m1"},
		{Kind: history.FaultMoveLeader},
		{Kind: history.FaultPauseClient, Client: "c1", Point: "before-write"},
		{Kind: history.FaultExpireLease, Client: "c2", Mode: "lapse"},
		{Kind: history.FaultCrashClient, Client: "c3"},
		{Kind: history.FaultLoseAnswer, Client: "c2"},
		{Kind: history.FaultHoldAnswers, Client: "c1"},
		{Kind: history.FaultLoseRequest, Client: "c2"},
		{Kind: history.FaultJumpClock, Member: "m2", Offset: int64(-1500 * time.Millisecond)},
		{Kind: history.FaultDriftClock, Member: "m1", Rate: 2.5},
	}
	kinds := map[history.FaultKind]bool{}
	for _, spec := range specs {
		kinds[spec.Kind] = true
		v1 := []history.Event{{Type: history.FaultStart, ID: 1, Fault: spec.String()}}
		w := history.FaultWindows(v1)
		require.Len(t, w, 1)
		assert.Equal(t, spec, w[0].Spec, "format 1's %q", spec.String())
	}
	assert.Len(t, kinds, len(history.FaultKinds()), "every kind is tried")
	assert.Equal(t, "partition m1 | m2 m3", specs[0].String())
	assert.Equal(t, "pause-client c1 at before-write", specs[11].String())
}

// A format 1 history file still reads, and its faults pair into windows.
func TestFormatOneStillReads(t *testing.T) {
	file := `{"locklab_history":1,"seed":1}
{"t":10,"type":"fault-start","id":1,"fault":"expire-lease c1 (revoke)"}
{"t":20,"type":"fault-end","id":1,"fault":"expire-lease c1 (revoke)","target":"lease 1a (already gone)"}
`
	h, events, err := history.Decode(strings.NewReader(file), "old.jsonl")
	require.NoError(t, err)
	assert.Equal(t, 1, h.Format)
	w := history.FaultWindows(events)
	require.Len(t, w, 1)
	assert.Equal(t, history.FaultSpec{Kind: history.FaultExpireLease, Client: "c1", Mode: "revoke", AlreadyGone: true}, w[0].Spec)
	assert.Equal(t, int64(10), w[0].Start)
	assert.Equal(t, int64(20), w[0].End)

	_, _, err = history.Decode(strings.NewReader(`{"locklab_history":3,"seed":1}`+"\n"), "new.jsonl")
	assert.ErrorContains(t, err, "new.jsonl:1: unsupported history format version 3 (this locklab reads versions 1 to 2)")
}

// FaultWindows pairs starts with ends by ID, in start order; the end's
// target and error win; a fault never ended lasts to the last event and
// excuses past it.
func TestFaultWindows(t *testing.T) {
	kill := &history.FaultSpec{Kind: history.FaultKillLeader}
	cut := &history.FaultSpec{Kind: history.FaultCutClient, Client: "c1"}
	events := []history.Event{
		{Time: 1, Type: history.FaultStart, ID: 1, Spec: kill},
		{Time: 2, Type: history.FaultStart, ID: 2, Spec: cut},
		{Time: 5, Type: history.FaultEnd, ID: 1, Spec: kill, Target: "m2", Error: "restart failed"},
		{Time: 9, Type: history.FaultEnd, ID: 7, Spec: cut}, // ends nothing that started
		{Time: 12, Type: history.Final},
	}
	w := history.FaultWindows(events)
	require.Len(t, w, 2)
	assert.Equal(t, history.FaultWindow{ID: 1, Spec: *kill, Target: "m2", Start: 1, End: 5, Err: "restart failed"}, w[0])
	assert.Equal(t, history.FaultWindow{ID: 2, Spec: *cut, Start: 2, End: 12, Open: true}, w[1])
	assert.Equal(t, int64(5), w[0].Until())
	assert.Equal(t, int64(math.MaxInt64), w[1].Until())
	assert.True(t, w[1].Within(12))
	assert.False(t, w[0].Within(6))
}

// Which members a fault cuts off from the majority, and whose link it
// holds: both ways, so that a check using them can fail.
func TestFaultCutsOffAndHoldsLinks(t *testing.T) {
	part := history.FaultWindow{Spec: history.FaultSpec{Kind: history.FaultPartition, Groups: [][]string{{"m1"}, {"m2", "m3"}}}}
	assert.True(t, part.CutsOff("m1"), "the minority side")
	assert.False(t, part.CutsOff("m2"), "the majority side")
	assert.False(t, part.CutsOff("m9"), "a member in no group")
	even := history.FaultWindow{Spec: history.FaultSpec{Kind: history.FaultPartition, Groups: [][]string{{"m1", "m2"}, {"m3", "m4"}}}}
	assert.True(t, even.CutsOff("m3"), "half is no majority")
	leader := history.FaultWindow{Spec: history.FaultSpec{Kind: history.FaultKillLeader}, Target: "m2"}
	assert.True(t, leader.CutsOff("m2"))
	assert.False(t, leader.CutsOff("m1"))
	assert.False(t, leader.CutsOff(""), "a client whose member is not known is never cut off")
	named := history.FaultWindow{Spec: history.FaultSpec{Kind: history.FaultIsolateMember, Member: "m3"}}
	assert.True(t, named.CutsOff("m3"))
	moved := history.FaultWindow{Spec: history.FaultSpec{Kind: history.FaultMoveLeader, Member: "m3"}}
	assert.False(t, moved.CutsOff("m3"), "moving the leader cuts nobody off")

	for _, k := range []history.FaultKind{history.FaultCutClient, history.FaultPauseClient, history.FaultDelayClient, history.FaultExpireLease, history.FaultLoseAnswer, history.FaultLoseRequest} {
		s := history.FaultSpec{Kind: k, Client: "c1"}
		assert.True(t, s.HoldsClientLink("c1"), "%s holds c1's link", k)
		assert.False(t, s.HoldsClientLink("c2"), "%s holds only its own client's link", k)
	}
	assert.False(t, history.FaultSpec{Kind: history.FaultCrashClient, Client: "c1"}.HoldsClientLink("c1"), "a crash cuts no link: it ends the client")
}
