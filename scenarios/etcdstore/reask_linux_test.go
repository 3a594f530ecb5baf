package etcdstore_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/scenarios"
)

// reaskProgram is a lock run as a process on python-etcd3: a key put if
// absent on a lease of its own; with "remember", an acquire asked while it
// holds answers the grant it remembers, not the store's.
const reaskProgram = `import os, sys
from urllib.parse import urlparse
import etcd3
u = urlparse(os.environ["LOCKLAB_ENDPOINTS"])
c = etcd3.client(host=u.hostname, port=u.port)
key, ttl = os.environ["LOCKLAB_LOCK"] + "/lock", int(os.environ["LOCKLAB_TTL"])
remember, held = "remember" in sys.argv, None
print("# ready", flush=True)
for line in sys.stdin:
    if line.strip() == "acquire":
        if held and remember:
            print(held, flush=True)
            continue
        lease = c.lease(ttl)
        ok, _ = c.transaction(compare=[c.transactions.create(key) == 0],
                              success=[c.transactions.put(key, "", lease)], failure=[])
        if not ok:
            print("error held by another", flush=True)
            continue
        _, meta = c.get(key)
        held = "granted key=%s token=%d lease=%d" % (key, meta.create_revision, lease.id)
        print(held, flush=True)
    elif line.strip() == "release":
        held = None
        print("released" if c.delete(key) else "error not-held gone", flush=True)
`

// The process protocol's acquire, asked while the program holds, asks the
// store: the preflight asks it once, after ending the grant, and a program
// that answers from memory is stopped there, in one sentence; one that asks
// the store passes.
func TestThePreflightAsksAgainWhileItHolds(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import etcd3").Run(); err != nil {
		t.Skipf("Debian's python3-etcd3 is not installed (apt-get install python3-etcd3; .ci/run does): %v", err)
	}
	t.Parallel()
	prog := filepath.Join(t.TempDir(), "lock.py")
	require.NoError(t, os.WriteFile(prog, []byte(reaskProgram), 0o644))
	name := process.ExecPrefix + "/usr/bin/python3 " + prog
	require.NoError(t, scenarios.PreflightOn(t.Context(), scenarios.Config{}, name), "a program that asks the store")
	err := scenarios.PreflightOn(t.Context(), scenarios.Config{}, name+" remember")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the grant it had before, which the store does not hold: it answered from memory")
}
