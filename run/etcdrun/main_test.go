package etcdrun

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/locklab/locklab/lock/etcdctl"
)

func TestMain(m *testing.M) {
	etcdctl.Serve() // -jepsen-lock etcdctl runs this binary as etcdctl
	goleak.VerifyTestMain(m)
}
