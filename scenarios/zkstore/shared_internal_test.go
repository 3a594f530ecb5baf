package zkstore

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster/zkd"
)

// A run's configurations share one ensemble, started when the first asks,
// each under a path of its own; closing the run's share ends it, and
// nothing is started for a run that never asked.
func TestARunsConfigurationsShareOneEnsemble(t *testing.T) {
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("%v: the ZooKeeper store was not tried (.ci/run installs it)", err)
	}
	require.NoError(t, backend{}.Share().Close(), "never asked: nothing to end")

	s := backend{}.Share().(*shared)
	first, err := s.get(t.Context())
	require.NoError(t, err)
	again, err := s.get(t.Context())
	require.NoError(t, err)
	assert.Same(t, first, again)
	assert.NotEqual(t, s.runID("lesson-lock-1"), s.runID("lesson-lock-1"), "an attempt run again is under a path of its own")

	require.NoError(t, s.Close())
	_, err = os.Stat(first.Root())
	assert.True(t, os.IsNotExist(err), "the ensemble is gone with the run")
	_, err = s.get(t.Context())
	assert.Error(t, err, "closed")
}
