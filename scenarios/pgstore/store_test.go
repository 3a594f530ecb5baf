package pgstore_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/pgd"
	"github.com/locklab/locklab/lock/pglock"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
	_ "github.com/locklab/locklab/scenarios/pgstore"
)

func skipWithoutPostgres(t *testing.T) {
	t.Helper()
	if _, err := pgd.Find(); err != nil {
		t.Skipf("%v: the PostgreSQL store was not tried (.ci/run installs it)", err)
	}
}

// The PostgreSQL locks people use through every lesson a PostgreSQL
// server can run, on the run's shared server: each result as documented —
// the paused and the cut-off holder FAIL the unfenced counter, the
// sequence's token fences them and so does pg-guarded's check of the
// grant's session, a waiter whose session the server ended
// is told so, a crashed holder's session ends with its connection, a
// failover to the streaming replica loses every lock and the sequence's
// last token, a server restarted loses every lock (and pg-xact's open
// transaction its token) —, the
// etcd resource skipped, saying why (and the client-clock lessons, which move a
// program's clock), the lessons of other stores left out.
func TestThePostgresLocksKeepTheCatalogsExpectations(t *testing.T) {
	skipWithoutPostgres(t)
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Locks: []string{"pg-session", "pg-try", "pg-xact"}, Scenarios: scenarios.Names(),
		Resources: []string{"unfenced", "fenced", "pg-guarded", "etcd-guarded"}, Runs: 1, Parallel: 4})
	require.NoError(t, err)
	judged := 0
	for _, r := range sum.Results {
		if r.Resource == "etcd-guarded" {
			assert.NotEmpty(t, r.Skipped)
			continue
		}
		if r.Skipped != "" {
			// A Go lock reads the lab's own clock, which the lab does not move.
			assert.True(t, strings.HasPrefix(r.Scenario, "client-clock-"), "%s × %s × %s skipped: %s", r.Scenario, r.Lock, r.Resource, r.Skipped)
			continue
		}
		judged++
		assert.True(t, r.Matches || r.NotJudged(), "%s × %s × %s: %s, expected %s: %s", r.Scenario, r.Lock, r.Resource, r.Verdict, r.Expected, r.Error)
	}
	assert.Equal(t, 3*14*3, judged, "fourteen lessons, three locks, three resources")
	require.NotNil(t, sum.Campaign)
	assert.NotEmpty(t, sum.Campaign.LessonsLeftOut, "the lessons of other stores are left out")
}

// Every known-bad PostgreSQL lock is caught by the lessons its regression
// names, by the check it names, on every resource.
func TestPostgresKnownBadLocksAreCaught(t *testing.T) {
	skipWithoutPostgres(t)
	for _, reg := range pglock.Regressions() {
		if l, _ := pglock.Find(reg.Name); l.Via == pglock.ViaPgBouncer {
			if _, err := pgd.FindPooler(); err != nil {
				t.Logf("%s not tried: %v (.ci/run installs it)", reg.Name, err)
				continue
			}
		}
		sum, err := scenarios.Run(t.Context(), scenarios.Config{Locks: []string{reg.Name},
			Scenarios: reg.Scenarios, Resources: []string{"unfenced", "fenced", "pg-guarded"}, Runs: 1, Parallel: 3})
		require.NoError(t, err)
		require.Len(t, sum.Results, 3*len(reg.Scenarios), reg.Name)
		for _, r := range sum.Results {
			assert.Equal(t, models.Fail, r.Verdict, "%s × %s × %s: %s", reg.Name, r.Scenario, r.Resource, r.Error)
			assert.True(t, slices.ContainsFunc(r.Checks, func(v models.Verdict) bool {
				return v.Check == reg.Check && v.Result == models.Fail
			}), "%s × %s caught by %s: %v", reg.Name, r.Scenario, reg.Check, r.Checks)
		}
	}
}
