package zkd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A log whose header a kill cut short is removed; a whole one, and any
// other file, stays.
func TestATornLogIsDroppedAndAWholeOneKept(t *testing.T) {
	dir := t.TempDir()
	v2 := filepath.Join(dir, "version-2")
	require.NoError(t, os.MkdirAll(v2, 0o755))
	files := map[string]int{"log.100000001": 0, "log.200000001": 9, "log.300000001": logHeader + 100, "snapshot.0": 0}
	for name, size := range files {
		require.NoError(t, os.WriteFile(filepath.Join(v2, name), make([]byte, size), 0o644))
	}
	require.NoError(t, dropTornLogs(dir))
	for name, size := range files {
		_, err := os.Stat(filepath.Join(v2, name))
		torn := strings.HasPrefix(name, "log.") && size < logHeader
		assert.Equal(t, torn, os.IsNotExist(err), "%s (%d bytes)", name, size)
	}
	require.NoError(t, dropTornLogs(t.TempDir()), "no data yet")
}

// A server's exit is told by its errors and their causes, not by the
// frames under them.
func TestAnExitIsToldByItsCauses(t *testing.T) {
	out := `WARN maxCnxns is not configured
ERROR QuorumPeer - Unable to load database on disk
java.io.EOFException
	at java.base/java.io.DataInputStream.readInt(DataInputStream.java:386)
Caused by: java.io.EOFException
	at org.apache.jute.BinaryInputArchive.readInt(BinaryInputArchive.java:96)
	... 4 more
ERROR ServiceUtils - Exiting JVM with code 1
`
	assert.Equal(t, "java.io.EOFException | Caused by: java.io.EOFException | ERROR ServiceUtils - Exiting JVM with code 1", exitLines(out, 3))
}
