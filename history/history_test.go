package history_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/history"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func i64(v int64) *int64 { return &v }

func TestClassify(t *testing.T) {
	assert.Equal(t, history.Ok, history.Classify(nil))
	assert.Equal(t, history.Fail, history.Classify(history.Definite(errors.New("compare failed"))))
	assert.Equal(t, history.Fail, history.Classify(fmt.Errorf("acquire: %w", history.Definite(errors.New("refused")))))
	assert.Equal(t, history.Info, history.Classify(errors.New("connection lost")))
	assert.Equal(t, history.Info, history.Classify(fmt.Errorf("put: %w", os.ErrDeadlineExceeded)))
	assert.NoError(t, history.Definite(nil))
}

func TestRecorderWritesAFileThatReadsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	w, err := history.Create(path, history.Header{Scenario: "paused-holder", Seed: 7, Lock: "queue", Resource: "fenced", Members: 3})
	require.NoError(t, err)
	_, err = os.Stat(path)
	require.True(t, os.IsNotExist(err), "nothing under the final name before Commit")

	rec := history.NewRecorder(w)
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			client := fmt.Sprintf("c%d", c+1)
			for range 20 {
				id := rec.Invoke(client, history.Acquire, history.Event{Lock: "l"})
				rec.Complete(id, nil, history.Event{Token: 5})
				id = rec.Invoke(client, history.CS, history.Event{Lock: "l"})
				rec.Complete(id, errors.New("timeout"), history.Event{Value: i64(1)})
				id = rec.Invoke(client, history.Release, history.Event{Lock: "l"})
				rec.Complete(id, history.Definite(errors.New("not held")), history.Event{})
			}
		})
	}
	wg.Wait()
	rec.Fault(1, true, history.FaultSpec{Kind: history.FaultKillLeader}, "", nil)
	rec.Fault(1, false, history.FaultSpec{Kind: history.FaultKillLeader}, "m2", nil)
	rec.LeaseLost(history.LeaseEnd{Client: "c1", Lease: 0x1a, LastAlive: time.Now().Add(-time.Millisecond)})
	rec.Final(20)
	require.NoError(t, rec.Err())
	require.NoError(t, w.Commit())

	h, events, err := history.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, history.FormatVersion, h.Format)
	assert.Equal(t, "paused-holder", h.Scenario)
	assert.Equal(t, uint64(7), h.Seed)
	require.Len(t, events, 8*20*6+4)
	counts := map[history.Type]int{}
	for _, e := range events {
		counts[e.Type]++
	}
	assert.Equal(t, map[history.Type]int{history.Invoke: 480, history.Ok: 160, history.Info: 160, history.Fail: 160,
		history.FaultStart: 1, history.FaultEnd: 1, history.LeaseLost: 1, history.Final: 1}, counts)
	fw := history.FaultWindows(events)
	require.Len(t, fw, 1)
	assert.Equal(t, history.FaultKillLeader, fw[0].Spec.Kind, "the fault's spec is read back typed")
	assert.Equal(t, "m2", fw[0].Member())
	assert.Equal(t, "kill-leader", events[len(events)-4].Fault, "and named for display")
	lost := events[len(events)-2]
	assert.Less(t, lost.AliveUntil, lost.Time)
	assert.Equal(t, int64(0x1a), lost.Lease)
	assert.Equal(t, int64(20), *events[len(events)-1].Value)
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*"))
	assert.Empty(t, left, "no temporary file is left")
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	w, err := history.Create(filepath.Join(dir, "h.jsonl"), history.Header{})
	require.NoError(t, err)
	require.NoError(t, w.Write(history.Event{Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire}))
	require.NoError(t, w.Abort())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

const header = `{"locklab_history":1,"seed":1}`

// ran is the header of a history a run of locklab wrote (it names the
// version): such a file ends with the resource's final value or the run's
// error.
const ran = `{"locklab_history":2,"seed":1,"locklab_version":"0.1.0"}`

func TestReaderNamesFileAndLine(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"empty", ``, "h.jsonl:1: empty file"},
		{"not json", `hello`, "h.jsonl:1: not a locklab history"},
		{"no version", `{"seed":1}`, `h.jsonl:1: not a locklab history: the first line has no "locklab_history"`},
		{"future version", `{"locklab_history":3}`, "h.jsonl:1: unsupported history format version 3 (this locklab reads versions 1 to 2)"},
		{"unknown fault kind", header + "\n" + `{"t":1,"type":"fault-start","id":1,"fault":"melt m1","spec":{"kind":"melt"}}`, `h.jsonl:2: fault-start: unknown fault kind "melt"`},
		{"malformed line", header + "\n" + `{"t":1,"type":"invoke",`, "h.jsonl:2: malformed event"},
		{"unknown field", header + "\n" + `{"t":1,"type":"invoke","id":1,"client":"c1","op":"acquire","colour":"red"}`, `h.jsonl:2: malformed event: json: unknown field "colour"`},
		{"unknown type", header + "\n" + `{"t":1,"type":"maybe","id":1}`, `h.jsonl:2: unknown event type "maybe"`},
		{"unknown op", header + "\n" + `{"t":1,"type":"invoke","id":1,"client":"c1","op":"steal"}`, `h.jsonl:2: unknown operation "steal"`},
		{"return before call", header + "\n" + `{"t":1,"type":"ok","id":4,"client":"c1","op":"acquire"}`, "h.jsonl:2: ok of operation 4 comes before its invocation"},
		{"completed twice", header + "\n" +
			`{"t":1,"type":"invoke","id":1,"client":"c1","op":"acquire"}` + "\n" +
			`{"t":2,"type":"ok","id":1,"client":"c1","op":"acquire"}` + "\n" +
			`{"t":3,"type":"ok","id":1,"client":"c1","op":"acquire"}`, "h.jsonl:4: operation 1 completed twice"},
		{"overlapping ops of one client", header + "\n" +
			`{"t":1,"type":"invoke","id":1,"client":"c1","op":"acquire"}` + "\n\n" +
			`{"t":2,"type":"invoke","id":2,"client":"c1","op":"cs"}`, "h.jsonl:4: client c1 invokes cs (id 2) while its acquire (id 1, line 2) is still open"},
		{"mismatched completion", header + "\n" +
			`{"t":1,"type":"invoke","id":1,"client":"c1","op":"acquire"}` + "\n" +
			`{"t":2,"type":"ok","id":1,"client":"c2","op":"acquire"}`, "h.jsonl:3: ok of operation 1 names c2 acquire, but it was invoked as c1 acquire (line 2)"},
		{"time goes backwards", header + "\n" +
			`{"t":5,"type":"invoke","id":1,"client":"c1","op":"acquire"}` + "\n" +
			`{"t":4,"type":"ok","id":1,"client":"c1","op":"acquire"}`, "h.jsonl:3: time goes backwards"},
		{"fault ends first", header + "\n" + `{"t":1,"type":"fault-end","id":1,"fault":"heal"}`, "h.jsonl:2: fault 1 ends before it starts"},
		{"lease lost in the future", header + "\n" + `{"t":1,"type":"lease-lost","id":0,"client":"c1","alive_until":9}`, "h.jsonl:2: lease-lost: alive_until 9 is after"},
		{"renewed after its last sighting", header + "\n" + `{"t":9,"type":"lease-lost","id":0,"client":"c1","alive_until":5,"renewed_at":7}`, "h.jsonl:2: lease-lost: renewed_at 7 is not between 0 and alive_until 5"},
		{"revoked after it was gone", header + "\n" + `{"t":9,"type":"lease-lost","id":0,"client":"c1","alive_until":5,"revoked_at":10}`, "h.jsonl:2: lease-lost: revoked_at 10 is not between 0 and the event's time 9"},
		{"a negative lease TTL", header + "\n" + `{"t":9,"type":"lease-lost","id":0,"client":"c1","alive_until":5,"lease_ttl":-1}`, "h.jsonl:2: lease-lost: negative lease_ttl -1"},
		{"cs without its read", header + "\n" +
			`{"t":1,"type":"invoke","id":1,"client":"c1","op":"cs"}` + "\n" +
			`{"t":2,"type":"ok","id":1,"client":"c1","op":"cs","accepted":true}`, "h.jsonl:3: ok critical section 1 of c1 has no read value"},
		{"cs without its write outcome", header + "\n" +
			`{"t":1,"type":"invoke","id":1,"client":"c1","op":"cs"}` + "\n" +
			`{"t":2,"type":"ok","id":1,"client":"c1","op":"cs","value":0}`, "h.jsonl:3: ok critical section 1 of c1 does not say whether its write was accepted"},
		{"final without value", header + "\n" + `{"t":1,"type":"final"}`, "h.jsonl:2: final without a value"},
		{"observed without what", header + "\n" + `{"t":1,"type":"observed","client":"c1"}`, "h.jsonl:2: observed without what"},
		{"connected without member", header + "\n" + `{"t":1,"type":"observed","what":"connected","client":"c1"}`, "h.jsonl:2: observed connected without a member"},
		{"leader without member", header + "\n" + `{"t":1,"type":"observed","what":"leader"}`, "h.jsonl:2: observed leader without a member"},
		{"stall ending before it began", header + "\n" + `{"t":5,"type":"observed","what":"stalled","stalled_from":9}`,
			"h.jsonl:2: observed stalled: stalled_from 9 is not before the event's time 5"},
		{"bad token that matches its key", header + "\n" + `{"t":1,"type":"observed","what":"bad-token","client":"c1","token":7,"key":"k","key_revision":7}`,
			`h.jsonl:2: observed bad-token: token 7, key "k" and key_revision 7 do not describe a mismatch`},
		{"line too long", header + "\n" + strings.Repeat("x", history.MaxLine+1), "h.jsonl:2: line longer than"},
		{"an expectation of no kind", `{"locklab_history":2,"seed":1,"expect":"BOGUS"}`, `h.jsonl:1: header: expect "BOGUS" is none of PASS, FAIL and ANY`},
		{"negative members", `{"locklab_history":2,"seed":1,"members":-3}`, "h.jsonl:1: header: negative members -3"},
		{"a negative minimum", `{"locklab_history":2,"seed":1,"minimum":{"grants":-1}}`, "h.jsonl:1: header: a negative minimum"},
		{"a negative token", header + "\n" + `{"t":1,"type":"invoke","id":1,"client":"c1","op":"cs","token":-5}`, "h.jsonl:2: negative token -5 or lease 0"},
		{"a run's error without the error", header + "\n" + `{"t":1,"type":"observed","what":"run-error"}`, "h.jsonl:2: observed run-error without an error"},
		{"a run's file with its header only", ran, "h.jsonl:1: the history ends before its run did"},
		{"a run's file cut at a line's end", ran + "\n" +
			`{"t":1,"type":"invoke","id":1,"client":"c1","op":"acquire"}` + "\n" +
			`{"t":2,"type":"ok","id":1,"client":"c1","op":"acquire","token":3}` + "\n", "h.jsonl:3: the history ends before its run did"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := history.Decode(strings.NewReader(tc.body), "h.jsonl")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

// A run's file that ends with its final value, or with the run's error,
// is whole.
func TestARunsFileEndsWithItsFinalValueOrItsError(t *testing.T) {
	for _, last := range []string{`{"t":3,"type":"final","value":1}`, `{"t":3,"type":"observed","what":"run-error","error":"step 2 failed"}`} {
		_, events, err := history.Decode(strings.NewReader(ran+"\n"+last+"\n"), "h.jsonl")
		require.NoError(t, err)
		assert.Len(t, events, 1)
	}
}

func TestReadFileMissing(t *testing.T) {
	_, _, err := history.ReadFile(filepath.Join(t.TempDir(), "nope.jsonl"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	yes := true
	events := []history.Event{
		{Time: 1, Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l"},
		{Time: 2, Type: history.FaultStart, ID: 1, Fault: "pause-client c1 at before-write"},
		{Time: 3, Type: history.Ok, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l", Token: 41},
		{Time: 4, Type: history.Invoke, ID: 2, Client: "c1", Op: history.CS, Lock: "l"},
		{Time: 5, Type: history.Ok, ID: 2, Client: "c1", Op: history.CS, Lock: "l", Token: 41, Value: i64(0), Accepted: &yes, WriteAt: 4},
		{Time: 6, Type: history.FaultEnd, ID: 1, Fault: "pause-client c1 at before-write", Target: "before-write"},
		{Time: 7, Type: history.LeaseLost, Client: "c1", Lease: 0x2f, AliveUntil: 6},
		{Time: 8, Type: history.Final, Value: i64(1)},
		{Time: 9, Type: history.Observed, What: history.ObservedConnected, Client: "c1", Member: "m1"},
	}
	var buf bytes.Buffer
	min := &history.Minimum{Grants: 2, Sections: 2, Accepted: 1, RegrantWithin: int64(time.Second)}
	require.NoError(t, history.Encode(&buf, history.Header{Seed: 3, Minimum: min}, events))
	h, back, err := history.Decode(&buf, "mem")
	require.NoError(t, err)
	assert.Equal(t, uint64(3), h.Seed)
	assert.Equal(t, min, h.Minimum)
	assert.Equal(t, events, back)
}

func TestPairGivesInfoInfinityAndSyntheticReleases(t *testing.T) {
	events := []history.Event{
		{Time: 1, Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire},
		{Time: 2, Type: history.Ok, ID: 1, Client: "c1", Op: history.Acquire, Token: 9},
		{Time: 3, Type: history.Invoke, ID: 2, Client: "c1", Op: history.CS},
		{Time: 4, Type: history.Info, ID: 2, Client: "c1", Op: history.CS, Error: "timeout"},
		{Time: 5, Type: history.Invoke, ID: 3, Client: "c2", Op: history.Acquire},
		{Time: 6, Type: history.Ok, ID: 3, Client: "c2", Op: history.Acquire, Token: 11},
		{Time: 7, Type: history.Invoke, ID: 4, Client: "c2", Op: history.Release},
		{Time: 8, Type: history.Ok, ID: 4, Client: "c2", Op: history.Release},
		{Time: 9, Type: history.Invoke, ID: 5, Client: "c3", Op: history.Acquire}, // never returns
	}
	ops := history.Pair(events)
	require.Len(t, ops, 5+2, "c1 and c3 may hold the lock at the end: each gets a synthetic release")
	assert.Equal(t, int64(history.Infinity), ops[1].Return, "info returns at infinity")
	assert.Equal(t, "timeout", ops[1].Error)
	assert.Equal(t, int64(history.Infinity), ops[4].Return, "never completed returns at infinity")
	assert.Equal(t, history.Info, ops[4].Type)
	for _, rel := range ops[5:] {
		assert.True(t, rel.Synthetic)
		assert.Equal(t, history.Release, rel.Op)
		assert.Equal(t, int64(history.Infinity), rel.Return)
		assert.Equal(t, int64(9), rel.Call, "no lease ended: the holder held to the end of the history")
	}
	assert.Equal(t, "c1", ops[5].Client)
	assert.Equal(t, "c3", ops[6].Client)
}

// A synthetic release is placed where the server ended the grant's lease,
// never at the holder's last event: before that moment it still held.
func TestSyntheticReleaseWaitsForTheLeaseOfTheGrant(t *testing.T) {
	events := []history.Event{
		{Time: 1, Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire},
		{Time: 2, Type: history.Ok, ID: 1, Client: "c1", Op: history.Acquire, Token: 9, Lease: 0xa},
		{Time: 50, Type: history.LeaseLost, Client: "c1", Lease: 0xb, AliveUntil: 40}, // another lease of c1
		{Time: 80, Type: history.LeaseLost, Client: "c1", Lease: 0xa, AliveUntil: 70},
		{Time: 90, Type: history.Invoke, ID: 2, Client: "c2", Op: history.Acquire},
		{Time: 95, Type: history.Ok, ID: 2, Client: "c2", Op: history.Acquire, Token: 12, Lease: 0xc},
	}
	ops := history.Pair(events)
	require.Len(t, ops, 4)
	rel := ops[2]
	require.True(t, rel.Synthetic)
	assert.Equal(t, "c1", rel.Client)
	assert.Equal(t, int64(70), rel.Call, "from the last moment lease a was known alive")
	assert.Equal(t, int64(80), rel.Return, "to the moment it was known gone")
	assert.Equal(t, int64(95), ops[3].Call, "c2 holds to the end of the history")
}
