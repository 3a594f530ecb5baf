package pgd_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/pgd"
)

func skipWithoutPostgres(t *testing.T) {
	t.Helper()
	if _, err := pgd.Find(); err != nil {
		t.Skipf("%v", err)
	}
}

// A server the lab starts takes connections through a client's link; a
// session's advisory lock holds against another session, goes when the
// server ends the session (pg_terminate_backend), and when the link is
// cut the client hears nothing while the server keeps its session. Close
// leaves no directory behind.
func TestAServerOfTheLabsOwn(t *testing.T) {
	skipWithoutPostgres(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := pgd.Start(ctx, pgd.Options{})
	require.NoError(t, err)
	link, err := s.Link()
	require.NoError(t, err)
	c1, err := pgx.Connect(ctx, pgd.ConnString(link.Addr()))
	require.NoError(t, err)
	defer c1.Close(context.Background())
	c2, err := pgx.Connect(ctx, pgd.ConnString(s.Addr()))
	require.NoError(t, err)
	defer c2.Close(context.Background())

	var got, other bool
	require.NoError(t, c1.QueryRow(ctx, "SELECT pg_try_advisory_lock(42)").Scan(&got))
	require.NoError(t, c2.QueryRow(ctx, "SELECT pg_try_advisory_lock(42)").Scan(&other))
	assert.True(t, got)
	assert.False(t, other, "one session at a time")

	var pid int64
	require.NoError(t, c1.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
	ok, err := s.Terminate(ctx, pid)
	require.NoError(t, err)
	assert.True(t, ok)
	require.Eventually(t, func() bool {
		var free bool
		return c2.QueryRow(ctx, "SELECT pg_try_advisory_lock(42)").Scan(&free) == nil && free
	}, 10*time.Second, 20*time.Millisecond, "the lock went with the session")
	assert.Error(t, c1.Ping(ctx), "c1's session is over")

	root := filepath(t, s)
	require.NoError(t, s.Close())
	_, err = os.Stat(root)
	assert.True(t, os.IsNotExist(err), "nothing left: %v", err)
}

// A killed server comes back on its data and port (what was written to
// disk before: commits are not synchronous, so the test checkpoints).
func TestAKilledServerRestarts(t *testing.T) {
	skipWithoutPostgres(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := pgd.Start(ctx, pgd.Options{})
	require.NoError(t, err)
	defer s.Close()
	for _, sql := range []string{"CREATE TABLE kept (v int)", "INSERT INTO kept VALUES (7)", "CHECKPOINT"} {
		_, err = s.Admin().Exec(ctx, sql)
		require.NoError(t, err)
	}
	addr := s.Addr()
	s.Kill()
	assert.Empty(t, s.Addr())
	dead, _ := s.Died()
	assert.False(t, dead, "a kill of the lab's is no death")
	require.NoError(t, s.Restart(ctx))
	assert.Equal(t, addr, s.Addr())
	var v int
	require.NoError(t, s.Admin().QueryRow(ctx, "SELECT v FROM kept").Scan(&v))
	assert.Equal(t, 7, v)
}

// filepath is the server's directory, read off its unix socket setting.
func filepath(t *testing.T, s *pgd.Server) string {
	var dir string
	require.NoError(t, s.Admin().QueryRow(t.Context(), "SHOW unix_socket_directories").Scan(&dir))
	return dir
}

// A streaming replica has what its primary wrote before its replication
// link was cut, and nothing written after; a failover kills the primary,
// promotes the replica, and the primary's links, Admin and Terminate reach
// the promoted one, where no advisory lock of the old primary's is held.
func TestAFailoverToAStreamingReplica(t *testing.T) {
	skipWithoutPostgres(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := pgd.Start(ctx, pgd.Options{})
	require.NoError(t, err)
	defer s.Close()
	for _, sql := range []string{"CREATE TABLE kept (v int)", "INSERT INTO kept VALUES (1)"} {
		_, err = s.Admin().Exec(ctx, sql)
		require.NoError(t, err)
	}
	r, err := s.StartReplica(ctx, pgd.Options{})
	require.NoError(t, err)
	defer r.Close()
	assert.Nil(t, s.Replication(), "a primary streams from nobody")
	count := func(p interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}) int {
		var n int
		require.NoError(t, p.QueryRow(ctx, "SELECT count(*) FROM kept").Scan(&n))
		return n
	}
	assert.Equal(t, 1, count(r.Admin()), "the base backup has the table")

	r.Replication().Cut()
	link, err := s.Link()
	require.NoError(t, err)
	c1, err := pgx.Connect(ctx, pgd.ConnString(link.Addr()))
	require.NoError(t, err)
	defer c1.Close(context.Background())
	var got bool
	require.NoError(t, c1.QueryRow(ctx, "SELECT pg_try_advisory_lock(42)").Scan(&got))
	require.True(t, got)
	_, err = s.Admin().Exec(ctx, "INSERT INTO kept VALUES (2)")
	require.NoError(t, err)

	require.NoError(t, s.FailOver(ctx, r))
	assert.Error(t, c1.Ping(ctx), "the old primary's sessions are gone")
	assert.Equal(t, 1, count(s.Admin()), "what was not replicated is lost")
	c2, err := pgx.Connect(ctx, pgd.ConnString(link.Addr()))
	require.NoError(t, err, "the link reaches the promoted replica")
	defer c2.Close(context.Background())
	require.NoError(t, c2.QueryRow(ctx, "SELECT pg_try_advisory_lock(42)").Scan(&got))
	assert.True(t, got, "no lock is replicated")
	_, err = c2.Exec(ctx, "INSERT INTO kept VALUES (3)")
	assert.NoError(t, err, "the promoted replica takes writes")
	require.NoError(t, r.Close())
	require.NoError(t, s.Close())
}

// Through PgBouncer in transaction mode, two clients' statements run on
// the one server connection of its pool: a session-level advisory lock
// one client took is held by that server session, and the other client's
// pg_advisory_lock is granted at once — a second holder.
func TestAPoolerInTransactionModeSharesTheSession(t *testing.T) {
	skipWithoutPostgres(t)
	if _, err := pgd.FindPooler(); err != nil {
		t.Skipf("%v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := pgd.Start(ctx, pgd.Options{})
	require.NoError(t, err)
	defer s.Close()
	p, err := pgd.StartPooler(ctx, s, pgd.Options{})
	require.NoError(t, err)
	defer p.Close()
	var conns [2]*pgx.Conn
	for i := range conns {
		link, err := p.Link()
		require.NoError(t, err)
		cfg, err := pgx.ParseConfig(pgd.ConnString(link.Addr()))
		require.NoError(t, err)
		cfg.RuntimeParams["idle_session_timeout"] = "5000" // ignored by the pooler, as the lab's clients send it
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		conns[i], err = pgx.ConnectConfig(ctx, cfg)
		require.NoError(t, err)
		defer conns[i].Close(context.Background())
	}
	var got [2]bool
	for i, c := range conns {
		require.NoError(t, c.QueryRow(ctx, "SELECT pg_try_advisory_lock(42)").Scan(&got[i]))
	}
	assert.Equal(t, [2]bool{true, true}, got, "both granted: one server session holds it twice")
	var holders int
	require.NoError(t, s.Admin().QueryRow(ctx, "SELECT count(DISTINCT pid) FROM pg_locks WHERE locktype = 'advisory' AND granted").Scan(&holders))
	assert.Equal(t, 1, holders)
	require.NoError(t, p.Close())
	dead, _ := p.Died()
	assert.False(t, dead, "a stop of the lab's is no death")
}
