package etcdrun

import (
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/grpcwire"
)

// Requests reads a client connection's requests off the wire (a unary
// gRPC call, or a request to the HTTP gateway; see cluster.SpotRequests):
// a pause at in-release stops the client before its release's second
// request reaches the member.
func (s store) Requests() func([]byte) bool { return cluster.SpotRequests(nil) }

// Writes reads a client connection's requests that may write off the
// wire (grpcwire.IsWrite): a pause at in-acquire stops the client before
// the request after its acquire's first write reaches the member.
func (s store) Writes() func([]byte) bool { return cluster.SpotRequests(grpcwire.IsWrite) }

// split is how a run on etcd stops a client inside its acquire or release.
const split = "the client's link cut before the request after its acquire's first write, or its release's first, " +
	"is forwarded (gRPC and the HTTP gateway read off the wire)"
