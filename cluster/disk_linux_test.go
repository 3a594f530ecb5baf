package cluster_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/internal/poll"
)

// diskBytes is what the files under dir take on disk (allocated blocks, as
// du counts them: a preallocated file counts in full).
func diskBytes(t *testing.T, dir string) int64 {
	var n int64
	require.NoError(t, filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Sys().(*syscall.Stat_t).Blocks * 512
		}
		return err
	}))
	return n
}

// A 3-member cluster that took a thousand writes stays small on disk: a
// run's clusters are many (one per configuration at a time), and etcd's
// default WAL segments, preallocated, took ~370 MB each.
func TestAClusterIsSmallOnDisk(t *testing.T) {
	dir := t.TempDir()
	c, err := cluster.Start(t.Context(), cluster.Config{Members: 3, Dir: dir})
	require.NoError(t, err)
	defer c.Close()
	wctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a thousand puts on a busy machine
	defer cancel()
	for i := range 1000 {
		// A put a busy machine's server timed out is put again: what this
		// test weighs is the disk, not the pace.
		err := poll.Until(wctx, "a put", 10*time.Millisecond, func(ctx context.Context) (bool, error) {
			_, err := c.Admin().Put(ctx, fmt.Sprintf("k%d", i%50), "a value of some thirty bytes...")
			return err == nil, err
		})
		require.NoError(t, err)
	}
	n := diskBytes(t, dir)
	t.Logf("a 3-member cluster after 1000 writes: %.1f MB on disk", float64(n)/1e6)
	assert.LessOrEqual(t, n, int64(40e6))
}
