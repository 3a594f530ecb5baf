//go:build unix

package clusterproc_test

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/clusterproc"
)

func TestMain(m *testing.M) {
	clusterproc.Serve()
	goleak.VerifyTestMain(m)
}

func TestChildServesAndStops(t *testing.T) {
	p, err := clusterproc.Start(t.Context(), clusterproc.Config{Members: 3})
	require.NoError(t, err)
	require.Len(t, p.Endpoints(), 3)

	c, err := cluster.Connect(t.Context(), cluster.External{Endpoints: p.Endpoints()})
	require.NoError(t, err)
	before, err := p.CPU()
	require.NoError(t, err)
	for range 50 {
		_, err := c.Admin().Put(t.Context(), "k", "v")
		require.NoError(t, err)
	}
	after, err := p.CPU()
	require.NoError(t, err)
	assert.Greater(t, after, before, "the cluster's work is the child's CPU")
	require.NoError(t, c.Close())

	pid := p.Pid()
	require.NoError(t, p.Close())
	assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "no process is left behind")
}

// Ctrl-C reaches the child too; it keeps serving until its parent closes
// it, so that it can remove its members' data.
func TestChildOutlivesAnInterrupt(t *testing.T) {
	p, err := clusterproc.Start(t.Context(), clusterproc.Config{Members: 1})
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(p.Pid(), syscall.SIGINT))
	_, err = p.CPU()
	assert.NoError(t, err, "the child still answers after SIGINT")
	assert.NoError(t, p.Close(), "and exits cleanly when closed")
}
