package models

import (
	"fmt"

	"github.com/locklab/locklab/history"
)

// CheckRelease checks that a release that answered "released" freed what
// it released: it FAILs a release after which the server still showed its
// grant held (history.ObservedReleaseKept) — an unlock sent on another
// session than the one holding the lock (a pooled connection's, another
// thread's), whose answer the lock took for done. The lock is then kept
// for nobody while the holding session lives: every later acquire waits.
// N/A when no release answered released, PASS when each freed its grant.
func CheckRelease(ops []history.Operation, events []history.Event) Verdict {
	v := Verdict{Check: "release"}
	for _, op := range ops {
		if op.Op == history.Release && op.Type == history.Ok {
			v.Operations++
		}
	}
	if v.Operations == 0 {
		v.Result, v.Explanation = NotApplicable, "No release answered that it released."
		return v
	}
	for _, e := range events {
		if e.Type != history.Observed || e.What != history.ObservedReleaseKept {
			continue
		}
		v.Result = Fail
		for _, op := range ops {
			if op.Op == history.Release && op.Type == history.Ok && op.Client == e.Client && op.Token == e.Token && op.Return <= e.Time {
				v.Evidence = evidence(op)
			}
		}
		v.Evidence = append(v.Evidence, fmt.Sprintf("server: %s's grant (token %d) still held once its release had returned", e.Client, e.Token))
		v.Explanation = fmt.Sprintf("%s's release answered that it released its grant (token %d), and the server still held "+
			"the grant after it: the lock is kept for nobody, and every acquire after it waits for as long as the "+
			"holding session lives. A release must free what it names before it answers — an unlock sent on "+
			"another session (a pooled connection's, another thread's) frees nothing.", e.Client, e.Token)
		return v
	}
	v.Result = Pass
	v.Explanation = fmt.Sprintf("Each of the %d releases that answered released freed its grant on the server, as far as "+
		"the lab looked.", v.Operations)
	return v
}
