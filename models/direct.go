package models

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/locklab/locklab/history"
)

// CheckTokens checks that fencing tokens grow with real time: a grant that
// completed before another was even asked for carries a smaller token, and no
// two grants share one. (Grants whose intervals overlap may complete in either
// order; only real-time order binds.)
func CheckTokens(ops []history.Operation) Verdict {
	grants := select_(ops, func(op history.Operation) bool {
		return op.Op == history.Acquire && op.Type == history.Ok && op.Token != 0
	})
	v := Verdict{Check: "tokens", Operations: len(grants)}
	if len(grants) == 0 {
		v.Result, v.Explanation = NotApplicable, "No grant carries a fencing token: this lock gives none, so token order was not checked."
		return v
	}
	seen := map[int64]history.Operation{}
	for _, g := range grants {
		if prev, dup := seen[g.Token]; dup && prev.Client != g.Client {
			v.Result, v.Evidence = Fail, evidence(prev, g)
			v.Explanation = fmt.Sprintf("Two grants carry the same fencing token %d: a fenced resource could not tell their writes apart.", g.Token)
			return v
		}
		seen[g.Token] = g
	}
	if a, b, ok := realTimeInversion(grants); ok {
		v.Result, v.Evidence = Fail, evidence(a, b)
		v.Explanation = fmt.Sprintf("Fencing tokens went backwards: %s's grant (token %d) completed before %s asked for the lock, "+
			"yet %s got the smaller token %d. A fenced resource would reject the newer holder's writes.",
			a.Client, a.Token, b.Client, b.Client, b.Token)
		return v
	}
	v.Result = Pass
	v.Explanation = fmt.Sprintf("All %d fencing tokens grow in real-time grant order and no two grants share one.", len(grants))
	return v
}

// CheckStaleWrites checks that no write was accepted with a token smaller than
// that of a write accepted before it (in real time): the property fencing
// exists to give. It looks at critical sections and fenced-store writes.
func CheckStaleWrites(ops []history.Operation) Verdict {
	writes := select_(ops, func(op history.Operation) bool {
		return (op.Op == history.CS || op.Op == history.Write) && op.Type == history.Ok &&
			op.Token != 0 && (op.Accepted == nil || *op.Accepted)
	})
	v := Verdict{Check: "stale-writes", Operations: len(writes)}
	if len(writes) == 0 {
		v.Result, v.Explanation = NotApplicable, "No accepted write carries a fencing token, so stale writes were not checked."
		return v
	}
	if a, b, ok := realTimeInversion(writes); ok {
		v.Result, v.Evidence = Fail, evidence(a, b)
		v.Explanation = fmt.Sprintf("A stale write got through: %s's write with token %d was accepted after %s's write with the newer token %d "+
			"had been accepted. The writer's lock had already passed on; a fenced resource would have rejected it.",
			b.Client, b.Token, a.Client, a.Token)
		return v
	}
	v.Result = Pass
	v.Explanation = fmt.Sprintf("No accepted write carries a token smaller than one accepted before it (%d writes).", len(writes))
	return v
}

// realTimeInversion finds a, b with a completed before b was called and
// a.Token > b.Token.
func realTimeInversion(ops []history.Operation) (a, b history.Operation, ok bool) {
	byCall := slices.Clone(ops)
	slices.SortStableFunc(byCall, func(x, y history.Operation) int { return cmp64(x.Call, y.Call) })
	byReturn := slices.Clone(ops)
	slices.SortStableFunc(byReturn, func(x, y history.Operation) int { return cmp64(x.Return, y.Return) })
	var best history.Operation // largest token among those returned so far
	have, i := false, 0
	for _, op := range byCall {
		for ; i < len(byReturn) && byReturn[i].Return < op.Call; i++ {
			if !have || byReturn[i].Token > best.Token {
				best, have = byReturn[i], true
			}
		}
		if have && best.Token > op.Token {
			return best, op, true
		}
	}
	return a, b, false
}

// window is one grant's span: from the grant's completion to the holder's
// release call, or to the last moment its lease was known alive, whichever is
// first.
type window struct {
	grant      history.Operation
	start, end int64
}

// windows builds a window per grant. leaseLost maps a client to the
// AliveUntil times of its lease-lost events; nil ignores leases (belief).
func windows(ops []history.Operation, leaseLost map[string][]int64) []window {
	sorted := slices.Clone(ops)
	slices.SortStableFunc(sorted, func(x, y history.Operation) int { return cmp64(x.Call, y.Call) })
	var out []window
	open := map[string]int{} // client → index in out of its open window
	for _, op := range sorted {
		switch {
		case op.Op == history.Acquire && op.Type == history.Ok:
			end := int64(math.MaxInt64)
			for _, t := range leaseLost[op.Client] {
				if t >= op.Return && t < end {
					end = t
				}
			}
			open[op.Client] = len(out)
			out = append(out, window{grant: op, start: op.Return, end: end})
		case op.Op == history.Release:
			if i, ok := open[op.Client]; ok {
				out[i].end = min(out[i].end, op.Call)
				delete(open, op.Client)
			}
		}
	}
	return out
}

// firstOverlap finds two windows of different clients that overlap.
func firstOverlap(ws []window) (a, b window, ok bool) {
	slices.SortStableFunc(ws, func(x, y window) int { return cmp64(x.start, y.start) })
	var reach window // the window reaching furthest so far
	for i, w := range ws {
		if i > 0 && w.start < reach.end && w.grant.Client != reach.grant.Client {
			return reach, w, true
		}
		if i == 0 || w.end > reach.end {
			reach = w
		}
	}
	return a, b, false
}

// CheckValidity checks that holder validity windows never overlap: from each
// grant to its release, or to the server-side loss of the holder's lease. A
// lock that grants while another holder's lease is still alive is broken
// whatever the resource does.
func CheckValidity(ops []history.Operation, events []history.Event) Verdict {
	lost := map[string][]int64{}
	for _, e := range events {
		if e.Type == history.LeaseLost {
			lost[e.Client] = append(lost[e.Client], e.AliveUntil)
		}
	}
	ws := windows(ops, lost)
	v := Verdict{Check: "validity", Operations: len(ws)}
	if len(ws) == 0 {
		v.Result, v.Explanation = NotApplicable, "The history has no grant."
		return v
	}
	if a, b, ok := firstOverlap(ws); ok {
		v.Result, v.Evidence = Fail, evidence(a.grant, b.grant)
		v.Explanation = fmt.Sprintf("The lock granted %s while %s still validly held it: %s had neither released nor lost its lease "+
			"(on the server) when %s's grant completed, %v later than %s's.",
			b.grant.Client, a.grant.Client, a.grant.Client, b.grant.Client, time.Duration(b.start-a.start), a.grant.Client)
		return v
	}
	v.Result = Pass
	v.Explanation = fmt.Sprintf("No two of the %d grants were valid at once: each began after the previous holder released or its lease ended on the server.", len(ws))
	return v
}
