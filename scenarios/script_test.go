package scenarios_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenarios"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestScripts runs every script with the queue lock and compares each step's
// output with the file. Regenerate with: go test ./scenarios -run Scripts -rewrite
func TestScripts(t *testing.T) {
	c, err := cluster.Start(t.Context(), cluster.Config{})
	require.NoError(t, err)
	defer c.Close()
	datadriven.Walk(t, "scripts", func(t *testing.T, path string) {
		env, err := scenarios.NewEnv(scenarios.EnvConfig{
			Cluster: c, Factory: lock.NewQueue, TTL: 1,
			RunID: strings.TrimSuffix(filepath.Base(path), ".txt"),
		})
		require.NoError(t, err)
		defer env.Close()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return env.Do(ctx, d.Cmd, d.CmdArgs) + "\n"
		})
		// Faults name clients as operations do: "pause-client c1 at …".
		for _, ev := range env.Events(0) {
			if ev.Type == history.FaultStart {
				assert.NotContains(t, ev.Fault, "/", "fault %q names a client by its cluster-wide name", ev.Fault)
				assert.NotContains(t, ev.Target, "/")
			}
		}
	})
}
