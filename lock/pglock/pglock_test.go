package pglock_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/cluster/pgd"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/pglock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// server is a PostgreSQL of the test's own, and the connection settings of
// a client with ttl-second idle timeouts, as the lab gives its clients.
func server(t *testing.T, ttl int) (*pgd.Server, func() *pgx.ConnConfig) {
	t.Helper()
	if _, err := pgd.Find(); err != nil {
		t.Skipf("%v", err)
	}
	s, err := pgd.Start(t.Context(), pgd.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, func() *pgx.ConnConfig {
		cfg, err := pgx.ParseConfig(pgd.ConnString(s.Addr()))
		require.NoError(t, err)
		ms := (time.Duration(ttl) * time.Second).Milliseconds()
		cfg.RuntimeParams["idle_session_timeout"] = strconv.FormatInt(ms, 10)
		cfg.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt(ms, 10)
		return cfg
	}
}

// Each lock people use holds against another client, hands over on
// release with a larger token, and outlives the server's idle timeout
// while it holds; the session's end is its holder's word that it is lost.
func TestTheLocksPeopleUse(t *testing.T) {
	s, cfg := server(t, 1)
	for _, name := range []string{"pg-session", "pg-try", "pg-xact"} {
		t.Run(name, func(t *testing.T) {
			l, err := pglock.Find(name)
			require.NoError(t, err)
			opts := lock.Options{TTL: 1, Prefix: "test/" + name + "/"}
			a, err := l.Factory(cfg(), "l", opts)
			require.NoError(t, err)
			defer a.Close()
			b, err := l.Factory(cfg(), "l", opts)
			require.NoError(t, err)
			defer b.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()

			ga, err := a.Acquire(ctx)
			require.NoError(t, err)
			assert.Positive(t, ga.Token)
			assert.Positive(t, ga.Lease)
			short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
			_, err = b.Acquire(short)
			stop()
			assert.Error(t, err, "one holder at a time")

			time.Sleep(1500 * time.Millisecond) // past the idle timeout: kept alive
			require.NoError(t, a.Release(ctx, ga))
			gb, err := b.Acquire(ctx)
			require.NoError(t, err)
			assert.Greater(t, gb.Token, ga.Token)

			ok, err := s.Terminate(ctx, gb.Lease)
			require.NoError(t, err)
			require.True(t, ok)
			select {
			case <-gb.Lost:
			case <-time.After(5 * time.Second):
				t.Fatal("the holder was not told its session ended")
			}
			assert.ErrorIs(t, b.Release(ctx, gb), lock.ErrNotHeld)
			ga, err = a.Acquire(ctx)
			require.NoError(t, err, "the lock went with the session")
			require.NoError(t, a.Release(ctx, ga))
		})
	}
}

// pg-idle sends nothing while it holds: the server ends its session a TTL
// later, and with it the lock, while its holder still works.
func TestAnIdleHolderLosesItsLock(t *testing.T) {
	_, cfg := server(t, 1)
	l, err := pglock.Find("pg-idle")
	require.NoError(t, err)
	require.NotNil(t, l.Bad)
	opts := lock.Options{TTL: 1, Prefix: "test/idle/"}
	a, err := l.Factory(cfg(), "l", opts)
	require.NoError(t, err)
	defer a.Close()
	b, err := l.Factory(cfg(), "l", opts)
	require.NoError(t, err)
	defer b.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err = a.Acquire(ctx)
	require.NoError(t, err)
	start := time.Now()
	_, err = b.Acquire(ctx)
	require.NoError(t, err, "granted once the idle holder's session was ended")
	assert.Greater(t, time.Since(start), 800*time.Millisecond)
}
