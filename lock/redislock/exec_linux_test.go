package redislock_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/redislock"
)

// execLocker runs script (sh) as a Redis lock whose client's link is at
// 127.0.0.1:6399; nothing listens there, and the program is told so.
func execLocker(t *testing.T, script string) lock.Locker {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lock.sh")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o644))
	f, err := redislock.Exec("sh " + path)
	require.NoError(t, err)
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6399"})
	t.Cleanup(func() { rc.Close() })
	l, err := f([]*redis.Client{rc}, "orders", lock.Options{TTL: 2})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

func execCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A program on Redis is told its store, its link, its key and the TTL in
// seconds; its grant is the key and value it names (the lab follows the
// grant by the value), with its token if it gives one. Its release is the
// latest grant's: an older one never reaches the program.
func TestExecOnRedisReadsTheGrant(t *testing.T) {
	l := execLocker(t, `echo "# ready"
while read cmd; do
  case "$cmd" in
  acquire) echo "granted key=$LOCKLAB_LOCK value=$LOCKLAB_STORE-$LOCKLAB_REDIS-$LOCKLAB_TTL token=7" ;;
  release) echo released ;;
  esac
done
`)
	g, err := l.Acquire(execCtx(t))
	require.NoError(t, err)
	assert.Equal(t, lock.Grant{Key: lock.DefaultPrefix + "orders", Value: "redis-127.0.0.1:6399-2", Token: 7}, g)
	assert.ErrorIs(t, l.Release(execCtx(t), lock.Grant{Key: g.Key, Value: "older"}), lock.ErrNotHeld)
	require.NoError(t, l.Release(execCtx(t), g))
	assert.ErrorIs(t, l.Release(execCtx(t), g), lock.ErrNotHeld, "released once")
	_, ok := l.(process.Program)
	assert.True(t, ok, "a program is a process.Program: the lab freezes it for a pause and kills it for a crash")
}

// A grant without the value its key holds cannot be followed, and the
// protocol's errors keep their classes.
func TestExecOnRedisBadAnswers(t *testing.T) {
	for i, tc := range []struct{ answer, want string }{
		{"granted key=k", "granted without key= and value="},
		{"granted key=k value=v token=-1", "no positive number"},
		{"error not-held it is gone", "not held"},
		{"error expired the key lapsed", "session expired"},
		{"hello", `printed "hello" when asked to acquire`},
	} {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			l := execLocker(t, "while read cmd; do echo '"+tc.answer+"'; done\n")
			_, err := l.Acquire(execCtx(t))
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), tc.want), "%v", err)
		})
	}
	_, err := redislock.Exec("  ")
	assert.ErrorIs(t, err, redislock.ErrUnknownLock)
}
