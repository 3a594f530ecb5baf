package reports_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/reports"
)

// benchResults are two locks at two client counts, and a measurement that
// failed, under a hostile name.
func benchResults(evil string) reports.Bench {
	r := rand.New(rand.NewPCG(1, 2))
	latency := func(base time.Duration, n int) reports.Latency {
		var l reports.Latency
		for range n {
			l.Samples = append(l.Samples, base+time.Duration(r.ExpFloat64()*float64(base)))
		}
		l.P50, l.P70, l.P90, l.P99 = base, base*3/2, 2*base, 4*base
		return l
	}
	b := reports.Bench{Title: "locklab bench", Command: "locklab bench " + evil, Where: "an embedded 3-member cluster",
		Floor: reports.Latency{P50: time.Millisecond, P90: 2 * time.Millisecond, P99: 3 * time.Millisecond}}
	for _, lock := range []string{"queue", "etcd-mutex"} {
		for _, n := range []int{1, 10} {
			b.Rows = append(b.Rows, reports.BenchRow{Lock: lock, Clients: n, LocksPerSec: 500 / float64(n),
				Acquire: latency(time.Duration(n)*time.Millisecond, 2000), Handoff: latency(time.Millisecond, 100),
				Wakeups: 1, Requests: 4, ClientsCPU: time.Second, ClusterCPU: 2 * time.Second})
		}
	}
	b.Rows = append(b.Rows, reports.BenchRow{Lock: evil, Clients: 10, Error: "failed: " + evil})
	return b
}

func TestBenchPageDrawsThePlots(t *testing.T) {
	dir := t.TempDir()
	evil := `<script>alert("x")</script>`
	require.NoError(t, reports.WriteBench(dir, benchResults(evil)))
	b, err := os.ReadFile(filepath.Join(dir, reports.BenchFile))
	require.NoError(t, err)
	page := string(b)
	assert.Equal(t, 3, strings.Count(page, `<svg class="plot"`), "locks/s against clients, and a latency plot per client count")
	assert.Equal(t, 2+2*2, strings.Count(page, "<polyline"), "a line per lock, and a curve per lock and count")
	assert.Contains(t, page, "p50 1.00 ms", "the floor is printed")
	assert.Contains(t, page, "failed: ", "the failed measurement is shown")
	assert.NotContains(t, page, "<script>", "names are escaped")
	assert.Less(t, len(b), 200_000, "curves are thinned to a few hundred points")
}
