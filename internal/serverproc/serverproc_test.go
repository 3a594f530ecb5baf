package serverproc_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/internal/serverproc"
	"github.com/locklab/locklab/internal/tailbuf"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A process that exits by itself has died, with its last words; one the
// lab stops is gone when Stop returns.
func TestAServerProcess(t *testing.T) {
	p, err := serverproc.Start(exec.Command("sh", "-c", "echo going; exit 3"), &tailbuf.Buffer{}, nil)
	require.NoError(t, err)
	<-p.Exited()
	dead, last := p.Died()
	assert.True(t, dead)
	assert.Contains(t, last, "going")

	p, err = serverproc.Start(exec.Command("sleep", "30"), &tailbuf.Buffer{}, nil)
	require.NoError(t, err)
	dead, _ = p.Died()
	assert.False(t, dead)
	start := time.Now()
	p.Stop(200 * time.Millisecond)
	assert.Less(t, time.Since(start), 10*time.Second)
	dead, _ = p.Died()
	assert.True(t, dead, "gone")

	var none *serverproc.Proc
	dead, _ = none.Died()
	assert.False(t, dead)
}
