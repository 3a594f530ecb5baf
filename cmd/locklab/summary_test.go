package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

// defaultShaped is a summary shaped like the default run's: 25 lessons ×
// 6 locks × 3 resources, each lesson's effects happening, increments lost
// on two, one lesson skipped for one lock, and what is passed as bad.
func defaultShaped(bad ...scenarios.Result) scenarios.Summary {
	locks := []string{"etcd-mutex", "queue", "ttl-poll", "single-key-watch", "etcd-election", "etcdctl"}
	var sum scenarios.Summary
	for i := range 25 {
		s := fmt.Sprintf("lesson-%02d", i)
		for _, l := range locks {
			for _, res := range []string{"unfenced", "fenced", "etcd-guarded"} {
				r := scenarios.Result{Scenario: s, Lock: l, Resource: res, Seed: 1, Verdict: models.Pass, Matches: true,
					Effects: []scenarios.EffectResult{{Name: s + " happened", Happened: true}}}
				if i == 4 && l == "etcdctl" {
					r = scenarios.Result{Scenario: s, Lock: l, Resource: res, Seed: 1,
						Skipped: "does not apply to this lock: it took a new lease for c1's second grant (" + res + ")"}
				}
				if i < 2 && res == "unfenced" {
					lost := 0.5
					r.Verdict, r.LostFraction = models.Fail, &lost
				}
				sum.Results = append(sum.Results, r)
			}
		}
	}
	sum.Results = append(sum.Results, bad...)
	return sum
}

// A default run's summary fits a screen — at most 40 lines with the run's
// first line and its four lines of progress (TestTheConsoleInALogPrintsATenthAtATime) — and lists every result not as expected,
// once, with its seed.
func TestADefaultRunsSummaryFitsAScreen(t *testing.T) {
	var out strings.Builder
	printSummary(&out, defaultShaped())
	lines := strings.Count(out.String(), "\n")
	assert.LessOrEqual(t, lines, 35, out.String())
	assert.Regexp(t, `\nlesson-00 +FAIL +PASS +PASS +all 6 locks\n`, out.String())
	assert.Contains(t, out.String(), "skipped (3): lesson-04 × etcdctl: does not apply to this lock")
	assert.Contains(t, out.String(), "acknowledged increments lost: lesson-00 × unfenced 50.0% in 6 of 6 runs; lesson-01 × unfenced 50.0% in 6 of 6 runs\n")
	assert.Contains(t, out.String(), "\n"+effectsAllHappened+"\n")

	bad := scenarios.Result{Scenario: "lesson-07", Lock: "queue", Resource: "fenced", Seed: 1, Verdict: models.Fail,
		Expected: scenarios.ExpectPass}
	out.Reset()
	sum := defaultShaped()
	for i, r := range sum.Results {
		if r.Scenario == bad.Scenario && r.Lock == bad.Lock && r.Resource == bad.Resource {
			sum.Results[i] = bad
		}
	}
	printSummary(&out, sum)
	assert.Equal(t, 1, strings.Count(out.String(), "UNEXPECTED lesson-07 × queue × fenced, seed 1: FAIL, expected PASS"), out.String())
	assert.Regexp(t, `\nlesson-07 +PASS +FAIL! +PASS +queue\n`, out.String(), "the lock that differs has a row of its own")
	assert.Regexp(t, `\nlesson-07 +PASS +PASS +PASS +etcd-mutex, ttl-poll, single-key-watch, etcd-election, etcdctl\n`, out.String())
}

// Where what a lesson claims did not happen in every run, the effects of
// that lesson are shown per lock; the others are not.
func TestOnlyEffectsThatFellShortAreShown(t *testing.T) {
	sum := defaultShaped()
	for i, r := range sum.Results {
		if r.Scenario == "lesson-09" && r.Lock == "ttl-poll" {
			sum.Results[i].Effects = []scenarios.EffectResult{{Name: "lesson-09 happened"}}
			sum.Results[i].Verdict, sum.Results[i].Matches = models.Error, true
		}
	}
	var out strings.Builder
	printEffectCounts(&out, sum)
	assert.Equal(t, `
effects not in every run (fewer than all: vacuous runs, ERROR; - skipped; the others happened in all)
  lesson-09 (etcd-mutex, queue, ttl-poll, single-key-watch, etcd-election, etcdctl)
      1/1    1/1    0/1!   1/1    1/1    1/1   lesson-09 happened
`, out.String())
}
