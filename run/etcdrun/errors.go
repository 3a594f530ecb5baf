package etcdrun

import (
	"errors"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/locklab/locklab/run"
)

func init() { run.StoreErrors(classify) }

// classify classes etcd's client's errors: a request on a lease the
// server no longer has is a session that ended (and changed nothing), a
// request the server or gRPC timed out is a timeout, and gRPC's
// "unavailable" is a connection lost.
func classify(err error) run.Failure {
	switch {
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		return run.FailSessionExpired
	case errors.Is(err, rpctypes.ErrTimeout), status.Code(err) == codes.DeadlineExceeded:
		return run.FailTimedOut
	case status.Code(err) == codes.Unavailable:
		return run.FailConnectionLost
	}
	return 0
}
