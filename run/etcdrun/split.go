package etcdrun

import "github.com/locklab/locklab/cluster"

// Requests reads a client connection's requests off the wire (a unary
// gRPC call, or a request to the HTTP gateway; see cluster.SpotRequests):
// a pause at in-release stops the client before its release's second
// request reaches the member.
func (s store) Requests() func([]byte) bool { return cluster.SpotRequests(nil) }

// split is how a run on etcd stops a client inside its release. (Inside an
// acquire it does not: an etcd lock takes its key in one Txn, and a
// client stopped just after it and killed there is crashed-holder's.)
const split = "the client's link cut before the request after its release's first is forwarded (gRPC and the " +
	"HTTP gateway read off the wire)"
