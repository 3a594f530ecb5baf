package etcdlock_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock/etcdlock"
)

// measure runs one bench measurement of b.N grants and reports it: ns/op is
// the time per grant (cluster start and client setup excluded).
func measure(b *testing.B, kind string, clients int) bench.Result {
	c, err := cluster.Start(b.Context(), cluster.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	f, err := etcdlock.Lookup(kind)
	if err != nil {
		b.Fatal(err)
	}
	res, err := bench.Run(b.Context(), c, bench.Config{Lock: kind, Factory: f, Clients: clients, Acquires: b.N})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(res.Elapsed.Nanoseconds())/float64(res.Acquires), "ns/op")
	return res
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkUncontended measures one client's acquire+release on a 3-member
// cluster, and the unary etcd requests each costs (lease keep-alives and
// watches are streams, not counted).
func BenchmarkUncontended(b *testing.B) {
	for _, kind := range etcdlock.Names() {
		b.Run("lock="+kind, func(b *testing.B) {
			res := measure(b, kind, 1)
			b.ReportMetric(res.Requests, "requests/op")
		})
	}
}

// BenchmarkContended measures locks/s with 2, 10 and 30 clients spread over
// the members, each acquiring and releasing as fast as it can, and the
// mean and median hand-off: from a holder's Release call to the next grant.
func BenchmarkContended(b *testing.B) {
	for _, kind := range etcdlock.Names() {
		for _, n := range []int{2, 10, 30} {
			b.Run(fmt.Sprintf("lock=%s/clients=%d", kind, n), func(b *testing.B) {
				res := measure(b, kind, n)
				b.ReportMetric(res.LocksPerSec, "locks/s")
				b.ReportMetric(ms(res.Handoff.Mean), "handoff-ms")
				b.ReportMetric(ms(res.Handoff.P50), "handoff-p50-ms")
				b.ReportMetric(res.SameClient, "same-client")
			})
		}
	}
}
