package etcdrun

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/run"
)

// etcd's client's errors are classed as the lab's own are: a request on a
// lease the server no longer has ended the session and changed nothing,
// gRPC's deadline is a timeout and "unavailable" a lost connection; the
// lock's own refusal still comes first, and an error etcd's client did not
// make keeps its text.
func TestEtcdsErrorsAreClassed(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("acquire: %w", rpctypes.ErrLeaseNotFound), "c1: error: session expired"},
		{rpctypes.ErrTimeout, "c1: error: timed out"},
		{status.Error(codes.DeadlineExceeded, "slow"), "c1: error: timed out"},
		{status.Error(codes.Unavailable, "gone"), "c1: error: connection lost"},
		{fmt.Errorf("%w: %w", lock.ErrNotHeld, status.Error(codes.Unavailable, "gone")), "c1: error: not held"},
		{fmt.Errorf("%w: %w", context.Canceled, status.Error(codes.Unavailable, "gone")), "c1: error: cancelled"},
		{status.Error(codes.PermissionDenied, "no"), "c1: error: rpc error: code = PermissionDenied desc = no"},
	} {
		assert.Equal(t, c.want, run.FailedOutcome(run.Failed, "c1", c.err).String(), "%v", c.err)
	}
	assert.Equal(t, history.Fail, history.Classify(run.Classify(rpctypes.ErrLeaseNotFound)), "a request on a lease gone changed nothing")
	assert.Equal(t, history.Info, history.Classify(run.Classify(rpctypes.ErrTimeout)), "a timed-out request may have been done")
}
