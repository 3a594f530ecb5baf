package lock_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/lock"
)

// counting is an etcd client whose unary requests are counted.
func counting(b *testing.B, c *cluster.Cluster, member int, n *atomic.Int64) *clientv3.Client {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{c.Endpoints()[member]},
		DialTimeout: 2 * time.Second,
		Logger:      zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(
			func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				n.Add(1)
				return invoker(ctx, method, req, reply, cc, opts...)
			})},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cli.Close() })
	return cli
}

// BenchmarkUncontended measures one client's acquire+release on a 3-member
// cluster, and the etcd requests each costs (lease keep-alives excluded: they
// are a stream, not unary requests).
func BenchmarkUncontended(b *testing.B) {
	for _, kind := range lock.Names() {
		b.Run("lock="+kind, func(b *testing.B) {
			c, err := cluster.Start(b.Context(), cluster.Config{})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			var reqs atomic.Int64
			cli := counting(b, c, 0, &reqs)
			f, _ := lock.Lookup(kind)
			l, err := f(cli, "bench", lock.Options{TTL: 5})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			ctx := b.Context()
			reqs.Store(0)
			for b.Loop() {
				g, err := l.Acquire(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(ctx, g); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(reqs.Load())/float64(b.N), "requests/op")
		})
	}
}

// BenchmarkContended measures locks/s with 2, 10 and 30 clients, spread over
// the members, each acquiring and releasing as fast as it can.
func BenchmarkContended(b *testing.B) {
	for _, kind := range lock.Names() {
		for _, n := range []int{2, 10, 30} {
			b.Run(fmt.Sprintf("lock=%s/clients=%d", kind, n), func(b *testing.B) {
				c, err := cluster.Start(b.Context(), cluster.Config{})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				f, _ := lock.Lookup(kind)
				var lockers []lock.Locker
				for i := range n {
					var unused atomic.Int64
					l, err := f(counting(b, c, i%3, &unused), "bench", lock.Options{TTL: 5})
					if err != nil {
						b.Fatal(err)
					}
					defer l.Close()
					lockers = append(lockers, l)
				}
				var left atomic.Int64
				left.Store(int64(b.N))
				ctx := b.Context()
				b.ResetTimer()
				var wg sync.WaitGroup
				for _, l := range lockers {
					wg.Go(func() {
						for left.Add(-1) >= 0 {
							g, err := l.Acquire(ctx)
							if err != nil {
								b.Error(err)
								return
							}
							if err := l.Release(ctx, g); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "locks/s")
			})
		}
	}
}
