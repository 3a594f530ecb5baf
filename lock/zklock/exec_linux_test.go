package zklock_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/zklock"
)

// execLocker runs script (sh) as a ZooKeeper lock whose client's links are
// at 127.0.0.1:2199 and :2198; nothing listens there, and the program is
// told so.
func execLocker(t *testing.T, script string) lock.Locker {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lock.sh")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o644))
	f, err := zklock.Exec("sh " + path)
	require.NoError(t, err)
	l, err := f([]string{"127.0.0.1:2199", "127.0.0.1:2198"}, "orders", lock.Options{TTL: 2, Prefix: "app/"})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

// A program on ZooKeeper is told its store, its links, its lock's path and
// the session timeout; its grant is the node it names, with its token.
// What it answers wrong is said in one error.
func TestExecOnZooKeeperReadsTheGrant(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	l := execLocker(t, `echo "# ready"
while read cmd; do
  case "$cmd" in
  acquire) echo "granted key=$LOCKLAB_LOCK/$LOCKLAB_STORE-$LOCKLAB_TTL-$LOCKLAB_ZOOKEEPER token=9" ;;
  release) echo released ;;
  esac
done
`)
	g, err := l.Acquire(ctx)
	require.NoError(t, err)
	assert.Equal(t, lock.Grant{Key: "/app/orders/zookeeper-2-127.0.0.1:2199,127.0.0.1:2198", Token: 9}, g)
	require.NoError(t, l.Release(ctx, g))
	assert.ErrorIs(t, l.Release(ctx, g), lock.ErrNotHeld, "released once")
	for i, tc := range []struct{ answer, want string }{
		{"granted key=node", "granted without key=NODE"},
		{"granted key=/n token=x", "no positive number"},
		{"error not-held gone", "not held"},
	} {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			l := execLocker(t, "while read cmd; do echo '"+tc.answer+"'; done\n")
			_, err := l.Acquire(ctx)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
