package locktest_test

import (
	"testing"

	"github.com/locklab/locklab/cluster/pgd"
	"github.com/locklab/locklab/lock/pglock"
	"github.com/locklab/locklab/locktest"
	_ "github.com/locklab/locklab/scenarios/pgstore" // the PostgreSQL store
)

// A Go lock on PostgreSQL through the gate: a session-level advisory lock,
// as a team would hand it over (a lock.Factory[*pgx.ConnConfig], whose
// store the gate finds by its client), through every lesson a PostgreSQL
// server can run and a few explored cases, on the fenced counter and
// pg-guarded.
func TestAPostgresLockThroughTheGate(t *testing.T) {
	if _, err := pgd.Find(); err != nil {
		t.Skipf("%v (.ci/run installs it)", err)
	}
	t.Parallel()
	locktest.Run(t, pglock.NewSession, locktest.Cases(3))
}
