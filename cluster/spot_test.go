package cluster_test

import (
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/grpcwire"
	"github.com/locklab/locklab/cluster/netproxy"
)

// A real client's gRPC connection is read request by request: each read
// that opens a unary call is spotted before it goes on, a write among them
// by the writes' reader; the stream of keep-alives opens no request.
func TestRequestsAreSpottedOnARealConnection(t *testing.T) {
	c := start(t, 1)
	u, err := url.Parse(c.Endpoints()[0])
	require.NoError(t, err)
	p, err := netproxy.New(func() (string, error) { return u.Host, nil })
	require.NoError(t, err)
	defer p.Close()
	var (
		mu               sync.Mutex
		requests, writes int
	)
	p.SetTap(func() (func([]byte), func([]byte)) {
		asked, wrote := cluster.SpotRequests(nil), cluster.SpotRequests(grpcwire.IsWrite)
		return func(b []byte) {
			a, w := asked(b), wrote(b)
			mu.Lock()
			defer mu.Unlock()
			if a {
				requests++
			}
			if w {
				writes++
			}
		}, nil
	})
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://" + p.Addr()}, DialTimeout: 5 * time.Second})
	require.NoError(t, err)
	defer cli.Close()
	ctx := t.Context()
	lease, err := cli.Grant(ctx, 5)
	require.NoError(t, err)
	_, err = cli.KeepAliveOnce(ctx, lease.ID)
	require.NoError(t, err)
	_, err = cli.Put(ctx, "k", "v", clientv3.WithLease(lease.ID))
	require.NoError(t, err)
	_, err = cli.Get(ctx, "k")
	require.NoError(t, err)
	_, err = cli.Delete(ctx, "k")
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 4, requests, "LeaseGrant, Put, Range, DeleteRange: the keep-alive is a stream's")
	assert.Equal(t, 2, writes, "Put, DeleteRange")
}
