package models_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// grant indexes one holder's acquire, critical section and release in ops.
type grant struct{ acquire, cs, release int }

// correctLock simulates a correct fenced lock: grants one after another,
// tokens growing, each critical section reading the previous one's write,
// while waiting clients' acquires overlap the current holder.
func correctLock(t *rapid.T) ([]op, []grant) {
	n := rapid.IntRange(2, 5).Draw(t, "clients")
	k := rapid.IntRange(1, 25).Draw(t, "grants")
	token := rapid.Int64Range(1, 1000).Draw(t, "first token")
	var ops []op
	var grants []grant
	free := map[string]int64{} // when each client's last operation returned
	now, prev := int64(0), ""
	for j := range k {
		c := prev
		for c == prev {
			c = fmt.Sprintf("c%d", rapid.IntRange(1, n).Draw(t, "client"))
		}
		at := now + rapid.Int64Range(1, 50).Draw(t, "gap")
		asked := rapid.Int64Range(free[c], at).Draw(t, "asked")
		grants = append(grants, grant{len(ops), len(ops) + 1, len(ops) + 2})
		ops = append(ops,
			op{client: c, op: A, call: asked, ret: at, token: token},
			op{client: c, op: C, call: at + 1, ret: at + 10, token: token, value: val(int64(j)), accepted: yes},
			op{client: c, op: R, call: at + 20, ret: at + 30})
		free[c], now, prev = at+30, at+30, c
		token += rapid.Int64Range(1, 5).Draw(t, "token step")
	}
	return ops, grants
}

func results(r models.Report) map[string]models.Result {
	out := map[string]models.Result{"mutex": r.Belief.Result}
	for _, v := range r.Safety {
		out[v.Check] = v.Result
	}
	return out
}

func TestPropertyCorrectLockAlwaysPasses(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ops, _ := correctLock(t)
		r := results(mustCheck(t, build(ops, nil, nil), 10*time.Second))
		for check, res := range r {
			if check != "expired-waiter" && check != "deadline" && check != "told-lost" { // no lease ends here, no deadline is recorded: N/A
				require.Equal(t, models.Pass, res, "%s", check)
			}
		}
	})
}

func TestPropertyOverlappingCriticalSectionsFail(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ops, grants := correctLock(t)
		if len(grants) < 2 {
			t.Skip("one grant cannot overlap")
		}
		j := rapid.IntRange(1, len(grants)-1).Draw(t, "overlapping grant")
		before, g := grants[j-1], grants[j]
		at := ops[before.acquire].ret + 1 // granted while the holder is inside its section
		ops[g.acquire].call = min(ops[g.acquire].call, at)
		ops[g.acquire].ret = at
		ops[g.cs].call, ops[g.cs].ret = at+1, at+2
		ops[g.cs].value = ops[before.cs].value // both read the same value
		ops[g.release].call, ops[g.release].ret = at+3, at+4

		r := results(mustCheck(t, build(ops, nil, nil), 10*time.Second))
		require.Equal(t, models.Fail, r["counter"], "lost update")
		require.Equal(t, models.Fail, r["mutex"], "two believed holders")
		require.Equal(t, models.Fail, r["validity"], "two valid holders")
	})
}

func TestPropertySwappedTokensFail(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ops, grants := correctLock(t)
		if len(grants) < 2 {
			t.Skip("nothing to swap")
		}
		i := rapid.IntRange(0, len(grants)-2).Draw(t, "first")
		j := rapid.IntRange(i+1, len(grants)-1).Draw(t, "second")
		a, b := grants[i], grants[j]
		ti, tj := ops[a.acquire].token, ops[b.acquire].token
		ops[a.acquire].token, ops[a.cs].token = tj, tj
		ops[b.acquire].token, ops[b.cs].token = ti, ti

		report := mustCheck(t, build(ops, nil, nil), 10*time.Second)
		require.Equal(t, models.Fail, report.Result())
		require.Equal(t, models.Fail, results(report)["stale-writes"])
	})
}

func TestPropertyAcceptedStaleWriteFails(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ops, grants := correctLock(t)
		if len(grants) < 2 {
			t.Skip("no older holder")
		}
		old := grants[rapid.IntRange(0, len(grants)-2).Draw(t, "old holder")]
		end := ops[len(ops)-1].ret
		// The old holder wakes up and writes with its old token. The value it
		// writes fits the counter: only the token gives it away.
		ops = append(ops, op{client: ops[old.cs].client, op: C, call: end + 10, ret: end + 20,
			token: ops[old.cs].token, value: val(int64(len(grants))), accepted: yes})

		r := results(mustCheck(t, build(ops, nil, nil), 10*time.Second))
		require.Equal(t, models.Pass, r["counter"], "the value alone looks fine")
		require.Equal(t, models.Fail, r["stale-writes"], "the token shows the write was stale")
	})
}

// BenchmarkCounterCheck checks 10,000 critical sections from 10 clients.
func BenchmarkCounterCheck(b *testing.B) {
	var ops []op
	for j := range 10_000 {
		c := fmt.Sprintf("c%d", j%10+1)
		at := int64(j) * 100
		ops = append(ops,
			op{client: c, op: A, call: max(at-900, 0), ret: at, token: int64(j + 1)},
			op{client: c, op: C, call: at + 1, ret: at + 10, token: int64(j + 1), value: val(int64(j)), accepted: yes},
			op{client: c, op: R, call: at + 20, ret: at + 30})
	}
	events := build(ops, nil, nil)
	pairs := history.Pair(events)
	b.ResetTimer()
	for b.Loop() {
		if v := models.CheckCounter(pairs, events, time.Minute); v.Result != models.Pass {
			b.Fatal(v.Result, v.Explanation)
		}
	}
}
