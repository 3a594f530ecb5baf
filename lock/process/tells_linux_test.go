//go:build linux

package process_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/lock"
)

// tellsLock runs script as a lock program.
func tellsLock(t *testing.T, script string) *proc.Lock {
	path := filepath.Join(t.TempDir(), "lock.sh")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o644))
	l := &proc.Lock{Program: &proc.Program{Argv: []string{"sh", path}, DirVar: "LOCKLAB_DIR"}, Who: "lock"}
	t.Cleanup(func() { l.Close() })
	return l
}

func keyOnly(proc.Answer) (lock.Grant, error) { return lock.Grant{Key: "k"}, nil }

// closed reports whether ch closes within d.
func closed(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// A program whose grant says tells=lost gives it a Lost, closed by the
// "lost" line it prints unasked — which answers no command: the release
// after it is answered as ever.
func TestAProgramTellsItsGrantLostByALine(t *testing.T) {
	l := tellsLock(t, `n=0
while read -r cmd; do
	case $cmd in
	acquire)
		n=$((n+1))
		echo "granted key=k tells=lost"
		if [ $n = 1 ]; then (sleep 0.3; echo lost) & fi ;;
	release) wait; echo released ;;
	esac
done
`)
	g, err := l.Acquire(t.Context(), keyOnly)
	require.NoError(t, err)
	require.NotNil(t, g.Lost, "tells=lost gives the grant a Lost")
	assert.False(t, closed(g.Lost, 100*time.Millisecond), "open until the program prints lost")
	assert.True(t, closed(g.Lost, 10*time.Second), "closed by the program's lost line")
	require.NoError(t, l.Release(t.Context(), g), "the lost line is no answer to the release")

	g, err = l.Acquire(t.Context(), keyOnly)
	require.NoError(t, err)
	require.NoError(t, l.Release(t.Context(), g))
	require.NoError(t, l.Close())
	assert.False(t, closed(g.Lost, 0), "a grant released is not lost when the program ends")
}

// A program that ends itself while it holds a grant it promised to tell
// of has told: what it held went with its process.
func TestAProgramThatTellsAndEndsItselfHasTold(t *testing.T) {
	l := tellsLock(t, `read cmd
echo "granted key=k tells=lost"
exit 1
`)
	g, err := l.Acquire(t.Context(), keyOnly)
	require.NoError(t, err)
	assert.True(t, closed(g.Lost, 10*time.Second))
}

// A grant that promises nothing has no Lost; one that promises anything
// but tells=lost is an error that says what it may promise.
func TestAGrantTellsOnlyWhatItPromised(t *testing.T) {
	l := tellsLock(t, `while read -r cmd; do
	case $cmd in
	acquire) echo "granted key=k" ;;
	release) echo released ;;
	esac
done
`)
	g, err := l.Acquire(t.Context(), keyOnly)
	require.NoError(t, err)
	assert.Nil(t, g.Lost, "no tells=: the lock cannot tell")

	bad := tellsLock(t, `read cmd
echo "granted key=k tells=maybe"
read cmd
`)
	_, err = bad.Acquire(t.Context(), keyOnly)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tells=lost")
}
