// Package locks_test runs the adapters of examples/locks — real etcd lock
// libraries from Debian and npm, put through locklab's process protocol —
// through the lessons that tell them apart, and holds each to its documented
// outcome (docs/locks-people-run.md): a later version of a library that
// changes one shows up here.
package locks_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/cluster/pgd"
	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/internal/leaks"
	"github.com/locklab/locklab/internal/testsize"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
	_ "github.com/locklab/locklab/scenarios/etcdstore"  // python-etcd3's, etcd3gw's and npm etcd3's locks on etcd
	_ "github.com/locklab/locklab/scenarios/pgstore"    // psycopg2's advisory lock on PostgreSQL
	_ "github.com/locklab/locklab/scenarios/redisstore" // redis-py's lock on Redis
	_ "github.com/locklab/locklab/scenarios/zkstore"    // kazoo's lock on ZooKeeper
)

func TestMain(m *testing.M) {
	// Real libraries through whole lessons: not beside the other lesson
	// packages (testsize.Alone says why).
	testsize.Alone()
	goleak.VerifyTestMain(m, leaks.Known()...)
}

// python is Debian's interpreter, which the libraries' packages install
// into (a python3 earlier on PATH may be another one).
const python = "/usr/bin/python3"

// Each adapter, as the library is and with a thread renewing its lease:
// neither library renews the lease it takes, so a holder that works past
// its TTL loses the lock while it works (slow-holder: lease-kept FAIL);
// with the refresher both pass. A paused holder is fenced either way.
func TestAdaptersKeepTheirDocumentedOutcomes(t *testing.T) {
	if err := exec.Command(python, "-c", "import etcd3, etcd3gw").Run(); err != nil {
		t.Skipf("examples/locks: Debian's python3-etcd3 and python3-etcd3gw are not installed (apt-get install "+
			"python3-etcd3 python3-etcd3gw; .ci/run does): %v", err)
	}
	want := map[string]string{} // lock/scenario → verdict, and the check that fails
	var locks []string
	for _, lib := range []string{"python-etcd3", "etcd3gw"} {
		script, err := filepath.Abs(filepath.Join(lib, "lock.py"))
		require.NoError(t, err)
		for _, flag := range []string{"", " --refresh"} {
			name := process.ExecPrefix + python + " " + script + flag
			locks = append(locks, name)
			want[name+"/paused-holder"] = "PASS"
			want[name+"/slow-holder"] = map[string]string{"": "FAIL lease-kept", " --refresh": "PASS"}[flag]
		}
	}
	holdTo(t, locks, want)
}

// python-etcd3's acquire waits with watch_once on the key from no start
// revision: a release that lands between the failed try and the watch is
// missed, and the waiter waits on a free lock for the key's next change.
// On a slow link (slow-link) that gap is wide, and the lock, renewed, is
// held to hand-off: FAIL, naming the wait.
func TestPythonEtcd3WaitsOnAFreeLockOverASlowLink(t *testing.T) {
	if err := exec.Command(python, "-c", "import etcd3").Run(); err != nil {
		t.Skipf("examples/locks: Debian's python3-etcd3 is not installed (apt-get install python3-etcd3; .ci/run does): %v", err)
	}
	script, err := filepath.Abs(filepath.Join("python-etcd3", "lock.py"))
	require.NoError(t, err)
	name := process.ExecPrefix + python + " " + script + " --refresh"
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Scenarios: []string{"slow-link"}, Locks: []string{name},
		Resources: []string{"fenced"}, Seed: 1})
	require.NoError(t, err)
	require.Len(t, sum.Results, 1)
	holdResult(t, sum.Results[0], "FAIL hand-off")
}

// npm's etcd3 renews the lease it takes (a third of its TTL apart), so a
// slow holder keeps its lock; a paused holder is fenced.
func TestNodeEtcd3KeepsItsDocumentedOutcomes(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("examples/locks: no Node.js here (apt-get install nodejs npm; .ci/run does): %v", err)
	}
	if _, err := os.Stat(filepath.Join("node-etcd3", "node_modules", "etcd3")); err != nil {
		t.Skipf("examples/locks: npm's etcd3 is not installed (npm ci --prefix examples/locks/node-etcd3; .ci/run does): %v", err)
	}
	script, err := filepath.Abs(filepath.Join("node-etcd3", "lock.js"))
	require.NoError(t, err)
	name := process.ExecPrefix + node + " " + script
	holdTo(t, []string{name}, map[string]string{name + "/paused-holder": "PASS", name + "/slow-holder": "PASS"})
}

// redis-py's Lock on Redis, as the library is and with a thread extending
// its key (--extend): it renews nothing, so a holder that works past its
// TTL loses the lock while it works (slow-holder: lease-kept FAIL); with
// the thread it keeps it, and a late release frees nothing of the next
// holder's either way. It gives no fencing token: the fenced resource is
// skipped, saying so.
func TestRedisPyKeepsItsDocumentedOutcomes(t *testing.T) {
	if err := exec.Command(python, "-c", "import redis").Run(); err != nil {
		t.Skipf("examples/locks: Debian's python3-redis is not installed (apt-get install python3-redis; .ci/run does): %v", err)
	}
	if _, err := redisd.Find(); err != nil {
		t.Skipf("examples/locks: %v", err)
	}
	script, err := filepath.Abs(filepath.Join("redis-py", "lock.py"))
	require.NoError(t, err)
	plain := process.ExecPrefix + python + " " + script
	extend := plain + " --extend"
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Scenarios: []string{"slow-holder", "stale-release"},
		Locks: []string{plain, extend}, Resources: []string{"unfenced", "fenced"}, Seed: 1, Store: "redis"})
	require.NoError(t, err)
	want := map[string]string{plain + "/slow-holder": "FAIL lease-kept", extend + "/slow-holder": "PASS",
		extend + "/stale-release": "PASS"}
	for _, r := range sum.Results {
		if r.Resource == "fenced" {
			assert.Contains(t, r.Skipped, "no fencing token", "%s/%s × fenced", r.Lock, r.Scenario)
			continue
		}
		// As the library is, its lock lapses a TTL after the grant: a
		// late release is the lesson on a busy machine, not only the key.
		if w, ok := want[r.Lock+"/"+r.Scenario]; ok {
			holdResult(t, r, w)
		}
	}
}

// A PostgreSQL advisory lock through psycopg2 (--store postgres), as an
// application writes it and with a thread keeping its session alive
// (--keepalive): a session that sends nothing while it holds is ended by a
// server's idle timeout, so a holder that works past it loses the lock
// while it works (slow-holder: lease-kept FAIL); kept alive, it holds, and
// a holder whose session the server ended is fenced by its token and by
// pg-guarded (paused-holder).
func TestPsycopg2KeepsItsDocumentedOutcomes(t *testing.T) {
	if err := exec.Command(python, "-c", "import psycopg2").Run(); err != nil {
		t.Skipf("examples/locks: Debian's python3-psycopg2 is not installed (apt-get install python3-psycopg2; .ci/run does): %v", err)
	}
	if _, err := pgd.Find(); err != nil {
		t.Skipf("examples/locks: %v", err)
	}
	script, err := filepath.Abs(filepath.Join("psycopg2", "lock.py"))
	require.NoError(t, err)
	plain := process.ExecPrefix + python + " " + script
	alive := plain + " --keepalive"
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Scenarios: []string{"slow-holder", "paused-holder"},
		Locks: []string{plain, alive}, Resources: []string{"fenced", "pg-guarded"}, Seed: 1, Store: "postgres"})
	require.NoError(t, err)
	want := map[string]string{plain + "/slow-holder": "FAIL lease-kept", alive + "/slow-holder": "PASS",
		plain + "/paused-holder": "PASS", alive + "/paused-holder": "PASS"}
	require.Len(t, sum.Results, 8)
	for _, r := range sum.Results {
		holdResult(t, r, want[r.Lock+"/"+r.Scenario])
	}
}

// kazoo's Lock on ZooKeeper (--store zookeeper): the node's zxid is its
// token, so the paused holder's late write is fenced, and unfenced it
// loses an update (paused-holder, as every lock). The whole catalog is
// the command in docs/stores.md (--runs 3); go test keeps to one ensemble.
func TestKazooKeepsItsDocumentedOutcomes(t *testing.T) {
	script := kazooLock(t)
	lk := process.ExecPrefix + python + " " + script
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Scenarios: []string{"paused-holder"},
		Locks: []string{lk}, Resources: []string{"unfenced", "fenced"}, Seed: 1, Store: "zookeeper"})
	require.NoError(t, err)
	want := map[string]string{"paused-holder/unfenced": "FAIL counter", "paused-holder/fenced": "PASS"}
	require.Len(t, sum.Results, len(want))
	for _, r := range sum.Results {
		holdResult(t, r, want[r.Scenario+"/"+r.Resource])
	}
}

// kazoo told: a holder told its lock is lost at kazoo's LOST state hears
// it only once it reconnects, long after the ensemble ended its session
// and granted the next client (holder-told, told-lost FAIL); told at
// SUSPENDED, as kazoo's documentation asks of a lock's holder, it is told
// in time, its own clock set back a minute or not.
func TestKazooTellsItsHolderOnlyAtSuspended(t *testing.T) {
	script := kazooLock(t)
	atLost := process.ExecPrefix + python + " " + script + " --tell=lost"
	atSuspended := process.ExecPrefix + python + " " + script + " --tell=suspended"
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Scenarios: []string{"holder-told", "client-clock-back"},
		Locks: []string{atLost, atSuspended}, Resources: []string{"fenced"}, Seed: 1, Store: "zookeeper"})
	require.NoError(t, err)
	want := map[string]string{atLost + "/holder-told": "FAIL told-lost", atSuspended + "/holder-told": "PASS",
		atLost + "/client-clock-back": "FAIL told-lost", atSuspended + "/client-clock-back": "PASS"}
	require.Len(t, sum.Results, 4)
	for _, r := range sum.Results {
		if strings.Contains(r.Skipped, "cannot move a client's clock") {
			continue // no C compiler for the clock shim
		}
		holdResult(t, r, want[r.Lock+"/"+r.Scenario])
	}
}

// kazooLock is the path of kazoo's adapter, or skips the test where kazoo
// or ZooKeeper is missing.
func kazooLock(t *testing.T) string {
	t.Helper()
	if err := exec.Command(python, "-c", "import kazoo").Run(); err != nil {
		t.Skipf("examples/locks: Debian's python3-kazoo is not installed (apt-get install python3-kazoo; .ci/run does): %v", err)
	}
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("examples/locks: %v", err)
	}
	script, err := filepath.Abs(filepath.Join("kazoo", "lock.py"))
	require.NoError(t, err)
	return script
}

// npm's redlock on five independent masters (--store redlock): Redlock's
// one lesson, a holder paused past its keys' expiry on every master, loses
// an update on the unfenced store (counter FAIL), as documented; it gives
// no token, so the fenced store is skipped, saying so.
func TestNodeRedlockKeepsItsDocumentedOutcomes(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("examples/locks: no Node.js here (apt-get install nodejs npm; .ci/run does): %v", err)
	}
	if _, err := os.Stat(filepath.Join("node-redlock", "node_modules", "redlock")); err != nil {
		t.Skipf("examples/locks: npm's redlock is not installed (npm ci --prefix examples/locks/node-redlock; .ci/run does): %v", err)
	}
	if _, err := redisd.Find(); err != nil {
		t.Skipf("examples/locks: %v", err)
	}
	script, err := filepath.Abs(filepath.Join("node-redlock", "lock.js"))
	require.NoError(t, err)
	name := process.ExecPrefix + node + " " + script
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Scenarios: []string{"redlock-paused"}, Locks: []string{name},
		Resources: []string{"unfenced", "fenced"}, Seed: 1, Store: "redlock"})
	require.NoError(t, err)
	require.Len(t, sum.Results, 2)
	for _, r := range sum.Results {
		if r.Resource == "fenced" {
			assert.Contains(t, r.Skipped, "no fencing token")
			continue
		}
		holdResult(t, r, "FAIL counter")
	}
}

// holdTo runs locks through paused-holder and slow-holder (seed 1, the
// fenced resource) and holds each result to want (lock/scenario → the
// verdict, and the check a FAIL comes from).
func holdTo(t *testing.T, locks []string, want map[string]string) {
	t.Helper()
	sum, err := scenarios.Run(t.Context(), scenarios.Config{Scenarios: []string{"paused-holder", "slow-holder"},
		Locks: locks, Resources: []string{"fenced"}, Seed: 1})
	require.NoError(t, err)
	require.Len(t, sum.Results, len(want))
	for _, r := range sum.Results {
		holdResult(t, r, want[r.Lock+"/"+r.Scenario])
	}
}

// holdResult holds r to want: its verdict, and the check a FAIL comes
// from. A result the machine kept from being judged is logged.
func holdResult(t *testing.T, r scenarios.Result, want string) {
	t.Helper()
	key := r.Lock + "/" + r.Scenario
	if r.NotJudged() {
		t.Logf("%s: not judged (the machine): %s", key, r.Error)
		return
	}
	got := string(r.Verdict)
	// The check a FAIL comes from (the one want names, if it failed); mutex
	// is the belief, no verdict's.
	_, check, _ := strings.Cut(want, " ")
	failed := func(v models.Verdict) bool { return v.Result == models.Fail && v.Check != "mutex" }
	if i := slices.IndexFunc(r.Checks, func(v models.Verdict) bool { return failed(v) && v.Check == check }); i >= 0 {
		got += " " + check
	} else if i := slices.IndexFunc(r.Checks, failed); i >= 0 && r.Verdict == models.Fail {
		got += " " + r.Checks[i].Check
	}
	assert.Equal(t, want, got, "%s: %s%s", key, r.Error, failures(r))
}

// failures lists the checks that failed, with why.
func failures(r scenarios.Result) string {
	var s string
	for _, v := range r.Checks {
		if v.Result != models.Pass && v.Result != models.NotApplicable {
			s += fmt.Sprintf("\n%s %s: %s", v.Check, v.Result, v.Explanation)
		}
	}
	return s
}
