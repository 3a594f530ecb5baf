package scenarios_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/cluster/pgd"
	"github.com/locklab/locklab/cluster/redisd"
	"github.com/locklab/locklab/cluster/zkd"
	"github.com/locklab/locklab/internal/clockshim"
	"github.com/locklab/locklab/internal/leaks"
	"github.com/locklab/locklab/lock/etcdctl"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/pglock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/lock/redislock"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/lock/zklock"
	"github.com/locklab/locklab/run/etcdrun"
	"github.com/locklab/locklab/run/pgrun"
	"github.com/locklab/locklab/run/redisrun"
	"github.com/locklab/locklab/run/zkrun"
	"github.com/locklab/locklab/script"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/testsize"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenarios"
)

func TestMain(m *testing.M) {
	etcdctl.Serve() // the etcdctl lock's etcdctl is this binary
	// The tests run whole lessons on 1 s leases: not beside the other
	// lesson packages (zkstore's JVMs, pgstore's postgres), which would
	// starve their keep-alives.
	testsize.Alone()
	// Its tests run go test's default number at once, not more: taking its
	// turn, the package would find the machine idle (the other package of
	// go test's two waiting for its own), run six tests and eight
	// configurations at once, and starve the locks it runs as processes
	// (etcdctl's waiters, granted seconds late, failed hand-off).
	goleak.VerifyTestMain(m, leaks.Known()...)
}

// TestScripts runs every script with the queue lock, on its scenario's leases
// (slow-link and lost-acquire are written for 3 s ones), and compares each step's
// output with the file. Regenerate with: go test ./scenarios -run Scripts -rewrite
//
// A script whose output differs, in a run whose environment took a lease
// away (a busy machine starved a keep-alive: models.CheckEnvironment), runs
// again, as the runner's configurations do (scenarios.Attempts in all):
// its output is compared line for line, which the machine's lapse changes
// (link-blip's waiter told its session expired) and the lock's bug too.
func TestScripts(t *testing.T) {
	t.Parallel() // one cluster, one script at a time: side by side with the others
	// Five times the lab's election timeout: the scripts change no leader
	// (isolated-asks cuts a member off, and the other two elect one in
	// half a second), and on a starved machine a 100 ms timeout let a
	// member call an election mid-script ("etcdserver: no leader").
	c, err := cluster.Start(t.Context(), cluster.Config{TickMs: 50, ElectionMs: 500})
	require.NoError(t, err)
	defer c.Close()
	datadriven.Walk(t, "scripts", func(t *testing.T, path string) {
		for attempt := 1; ; attempt++ {
			differs, lapsed, diagnosis := runScript(t, c, path, attempt)
			if len(differs) == 0 {
				return
			}
			if lapsed == "" || attempt == scenarios.Attempts {
				for _, d := range differs {
					t.Error(d)
				}
				for _, line := range diagnosis {
					t.Log(line)
				}
				if lapsed != "" {
					t.Logf("on every attempt the environment took a lease away: %s", lapsed)
				}
				return
			}
			t.Logf("attempt %d: the environment took a lease away (%s), and the output differed: %s", attempt, lapsed, differs[0])
		}
	})
}

// runScript runs the script at path once, on a fresh key prefix, and
// returns where its output differed from the file's (with -rewrite, the
// file is rewritten instead) and, if the run's environment took a lease
// away, why; else, where the output differed, what the environment check
// and the lease losses say (for the log).
func runScript(t *testing.T, c *cluster.Cluster, path string, attempt int) (differs []string, lapsed string, diagnosis []string) {
	name := strings.TrimSuffix(filepath.Base(path), ".txt")
	s, err := scenarios.Lookup(name)
	require.NoError(t, err, "every script is a catalog scenario's")
	var env scriptEnv
	switch {
	case movesClientClock(s):
		env = clientClockEnv(t, s) // a client's own clock: a program's, on Redis
	case s.For(zkKind) && !s.For(scenarios.DefaultKind()) && !s.For(redisKind):
		env = zkEnv(t, s) // a lesson of ZooKeeper's own: on zk-herd
	case s.For(pgKind) && !s.For(scenarios.DefaultKind()) && !s.For(redisKind):
		env = pgEnv(t, s) // a lesson of PostgreSQL's own: on pg-session
	case !s.For(scenarios.DefaultKind()):
		env = redisEnv(t, s) // a Redis lesson: on redis-setnx, or Redlock
	default:
		e, err := etcdrun.New(etcdrun.Config{
			Cluster: c, Factory: etcdlock.NewQueue, TTL: s.TTL, OpTimeout: s.OpTimeout(), RunID: fmt.Sprintf("%s-%d", name, attempt),
		})
		require.NoError(t, err)
		env = e
	}
	defer env.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	env.Bind(ctx) // an async step outlives the step that starts it
	rewrite := flag.Lookup("rewrite") != nil && flag.Lookup("rewrite").Value.String() == "true"
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		// The file's command line, read by the lab's own reader.
		line := d.Cmd
		for _, a := range d.CmdArgs {
			line += " " + a.String()
		}
		out, err := script.DoLine(ctx, env, line)
		require.NoError(t, err, "%s: %s", d.Pos, line)
		if script.Matches(strings.TrimSuffix(d.Expected, "\n"), out.String()) {
			return d.Expected // one of the answers the script allows
		}
		if rewrite {
			return out.String() + "\n"
		}
		differs = append(differs, fmt.Sprintf("%s: %s\nexpected:\n%s\nfound:\n%s", d.Pos, line, d.Expected, out))
		return d.Expected // judged once the script has run
	})
	// Faults name clients as operations do: "pause-client c1 at …".
	for _, ev := range env.Events(0) {
		if ev.Type == history.FaultStart {
			assert.NotContains(t, ev.Fault, "/", "fault %q names a client by its cluster-wide name", ev.Fault)
			assert.NotContains(t, ev.Target, "/")
		}
	}
	// A lease the server ended says what TTL it was granted and when
	// its client last renewed it: the isolated holder's session kept
	// sending keep-alives into the cut. (A fact of the history, not a
	// timing: how close to the end the last one went depends on how busy
	// the machine was, and the environment check judges that.)
	cutAt := int64(-1)
	for _, w := range history.FaultWindows(env.Events(0)) {
		if w.Spec.Client == "c1" && cutAt < 0 {
			cutAt = w.Start
		}
	}
	for _, l := range history.LeaseLosses(env.Events(0)) {
		assert.Equal(t, (time.Duration(s.TTL) * time.Second).Nanoseconds(), l.TTL, "%s's lease %x: the granted TTL", l.Client, l.Lease)
		if filepath.Base(path) == "isolated-holder.txt" && l.Client == "c1" && len(differs) == 0 {
			assert.True(t, cutAt >= 0 && l.RenewedAt > cutAt, "c1 sent keep-alives into the cut (cut at %d): %+v", cutAt, l)
		}
	}
	if len(differs) > 0 {
		reports, err := env.Reports()
		require.NoError(t, err)
		for _, r := range reports {
			if r.Environment.Result == models.Error {
				lapsed, _, _ = strings.Cut(r.Environment.Explanation, ". ")
				break
			}
		}
		if lapsed == "" {
			lapsed = starvedRenewer(history.LeaseLosses(env.Events(0)))
		}
		if lapsed == "" {
			lapsed = starvedCPU(env.Events(0))
		}
		if lapsed == "" && len(reports) > 0 {
			diagnosis = append(diagnosis, "environment: "+reports[0].Environment.Explanation)
			for _, l := range history.LeaseLosses(env.Events(0)) {
				diagnosis = append(diagnosis, fmt.Sprintf("lease lost: %+v", l))
			}
		}
	}
	return differs, lapsed, diagnosis
}

// scriptEnv is a run on either store, as TestScripts drives it.
type scriptEnv interface {
	script.Target
	Events(i int) []history.Event
	Reports() ([]models.Report, error)
	Close() error
}

// The stores' kinds, as their backends register them.
var (
	redisKind   = scenarios.StoreKind{Name: "redis", Label: "one Redis primary", Can: redisrun.Capabilities(false)}
	redlockKind = scenarios.StoreKind{Name: "redlock", Label: "Redlock's masters", Can: redisrun.Capabilities(true)}
	zkKind      = scenarios.StoreKind{Name: "zookeeper", Label: "a ZooKeeper ensemble", Can: zkrun.Capabilities()}
	pgKind      = scenarios.StoreKind{Name: "postgres", Label: "a PostgreSQL server", Can: pgrun.Capabilities()}
)

// pgEnv is a run of pg-session on a server of its own, or skips the test
// where PostgreSQL is missing.
func pgEnv(t *testing.T, s scenarios.Scenario) scriptEnv {
	t.Helper()
	if _, err := pgd.Find(); err != nil {
		t.Skipf("%v: %s was not run (.ci/run installs it)", err, s.Name)
	}
	srv, err := pgd.Start(t.Context(), pgd.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	env, err := pgrun.New(pgrun.Config{Server: srv, Factory: pglock.NewSession, TTL: s.TTL, OpTimeout: s.OpTimeout(), RunID: s.Name})
	require.NoError(t, err)
	return env
}

// storesOf names the stores s is a lesson for, in order.
func storesOf(t *testing.T, s scenarios.Scenario) string {
	t.Helper()
	var on []string
	for _, k := range []scenarios.StoreKind{scenarios.DefaultKind(), redisKind, redlockKind, zkKind} {
		if s.For(k) {
			on = append(on, k.Name)
		}
	}
	return strings.Join(on, " ")
}

// redisEnv is a run of redis-setnx on a Redis primary with two replicas,
// or of Redlock on five masters for a Redlock lesson, on its unfenced
// resource; or skips the test where redis-server is missing.
func redisEnv(t *testing.T, s scenarios.Scenario) scriptEnv {
	t.Helper()
	if _, err := redisd.Find(); err != nil {
		t.Skipf("%v: %s was not run (.ci/run installs it)", err, s.Name)
	}
	masters := s.For(redlockKind) && !s.For(redisKind) // a lesson of Redlock's own
	var (
		set *redisd.Set
		err error
	)
	factory := redislock.NewSetNX
	resources := redisrun.Resources(false)
	opts := redisd.Options{}
	if slices.Contains(s.Needs(), script.JumpClock) {
		if _, err := clockshim.Build(t.Context()); err != nil {
			t.Skipf("%v: %s was not run", err, s.Name)
		}
		opts.Clocks = true
	}
	if masters {
		set, err = redisd.StartIndependent(t.Context(), redislock.RedlockMasters, opts)
		factory, resources = redislock.NewRedlock, []string{"unfenced"}
	} else {
		set, err = redisd.StartReplicated(t.Context(), 2, opts)
	}
	require.NoError(t, err)
	t.Cleanup(func() { set.Close() })
	env, err := redisrun.New(redisrun.Config{Set: set, Masters: masters, Factory: factory, TTL: s.TTL,
		OpTimeout: s.OpTimeout(), RunID: s.Name, Resource: resources})
	require.NoError(t, err)
	return env
}

// movesClientClock reports whether s's script moves a client's own clock
// (jump-clock cN, drift-clock cN).
func movesClientClock(s scenarios.Scenario) bool {
	steps, err := s.Script()
	return err == nil && slices.ContainsFunc(steps, func(st script.Step) bool {
		return (st.Cmd.Name == "jump-clock" || st.Cmd.Name == "drift-clock") && st.Cmd.Client != ""
	})
}

// clientClockEnv is a run of deadline-lock.sh (a lock run as a program
// that tells its holder, counting its TTL on a monotonic clock) on a Redis
// primary, each client's program on a clock of its own; or skips the test
// where redis-server or a C compiler is missing.
func clientClockEnv(t *testing.T, s scenarios.Scenario) scriptEnv {
	t.Helper()
	if _, err := redisd.Find(); err != nil {
		t.Skipf("%v: %s was not run (.ci/run installs it)", err, s.Name)
	}
	shim, err := clockshim.Build(t.Context())
	if err != nil {
		t.Skipf("%v: %s was not run", err, s.Name)
	}
	factory, err := redislock.Exec("sh ../lock/redislock/deadline-lock.sh monotonic")
	require.NoError(t, err)
	set, err := redisd.StartReplicated(t.Context(), 2, redisd.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { set.Close() })
	env, err := redisrun.New(redisrun.Config{Set: set, Factory: factory, TTL: s.TTL, OpTimeout: s.OpTimeout(),
		RunID: s.Name, Resource: redisrun.Resources(false)})
	require.NoError(t, err)
	env.MoveClientClocks(shim)
	return env
}

// zkEnv is a run of zk-herd (a correct recipe: zk-lock's documented FAIL
// is a lesson of ZooKeeper's own) on an ensemble of three, or skips the
// test where ZooKeeper is missing.
func zkEnv(t *testing.T, s scenarios.Scenario) scriptEnv {
	t.Helper()
	if _, _, err := zkd.Find(); err != nil {
		t.Skipf("%v: %s was not run (.ci/run installs it)", err, s.Name)
	}
	l, err := zklock.Find("zk-herd")
	require.NoError(t, err)
	opts := zkd.Options{}
	if slices.Contains(s.Needs(), script.JumpClock) {
		if _, err := clockshim.Build(t.Context()); err != nil {
			t.Skipf("%v: %s was not run", err, s.Name)
		}
		opts.Clocks = true
	}
	ens, err := zkd.Start(t.Context(), 3, opts)
	require.NoError(t, err)
	t.Cleanup(func() { ens.Close() })
	env, err := zkrun.New(zkrun.Config{Ensemble: ens, Factory: l.Factory, TTL: s.TTL, OpTimeout: s.OpTimeout(), RunID: s.Name})
	require.NoError(t, err)
	return env
}

// A script from outside the catalog is parsed as strictly as the catalog's,
// and says itself what it needs and what it expects.
func TestFromScript(t *testing.T) {
	ok := "# A lesson.\nsetup members=5 ttl=2\n----\nready\n\nclient c1 member=m5\n----\nc1: connected to m5\n\n" +
		"check\n----\nunfenced: FAIL (counter FAIL)\nfenced: PASS\nbelief: two clients believed they held the lock at once\n"
	s, err := scenarios.FromScript("mine", "mine.txt", ok)
	require.NoError(t, err)
	assert.Equal(t, 5, s.Members)
	assert.Equal(t, 2, s.TTL)
	assert.Equal(t, "A lesson.", s.Lesson)
	assert.Equal(t, scenarios.ExpectFail, s.Expect("unfenced"))
	assert.Equal(t, scenarios.ExpectPass, s.Expect("fenced"))
	assert.Equal(t, scenarios.ExpectPass, s.Expect("etcd-guarded"), "a resource the check does not name must pass")
	assert.Equal(t, "etcd redis zookeeper", storesOf(t, s), "nothing of one store's alone: it runs on every one")

	// What a script needs is read from its commands, and it runs where
	// that can be done.
	for body, want := range map[string]string{
		"expire c1\n----\nx\n":                                     "etcd",
		"expire c1 mode=lapse\n----\nx\n":                          "etcd zookeeper",
		"acquire c1 answer=lost\n----\nx\n":                        "etcd redis zookeeper",
		"release c1 answer=lost\n----\nx\n":                        "etcd redis zookeeper",
		"acquire c1 next=lost\n----\nx\n":                          "zookeeper",
		"isolate member=m1\n----\nx\n":                             "etcd redis zookeeper",
		"kill member=m1\n----\nx\n":                                "etcd zookeeper",
		"kill member=leader\n----\nx\n\nwait-served\n----\nx\n":    "zookeeper",
		"wait-told c1\n----\nx\n":                                  "etcd redis zookeeper",
		"pause c1 at=in-release\n----\nx\n":                        "etcd redis zookeeper",
		"hold-answers c1 for=1s\n----\nx\n":                        "etcd redis zookeeper",
		"failover\n----\nx\n":                                      "redis",
		"pause c1 at=before-write\n----\nx\n\ncrash c1\n----\nx\n": "etcd redis zookeeper",
	} {
		s, err := scenarios.FromScript("mine", "mine.txt", "client c1 member=m1\n----\nx\n\n"+body+"\ncheck\n----\nfenced: PASS\n")
		require.NoError(t, err, body)
		assert.Equal(t, want, storesOf(t, s), body)
	}

	for _, c := range []struct{ text, err string }{
		{"acquire c1 fast\n----\nx\n", `mine.txt:1: acquire: unexpected argument "fast"`},
		{"pause c1 when=now\n----\nx\n", `mine.txt:1: pause: unknown argument "when"`},
		{"acquire\n----\nx\n", "mine.txt:1: acquire: want a client name"},
		{"grab c1\n----\nx\n", `mine.txt:1: unknown command "grab"`},
		{"heal c1\n----\nx\n", `mine.txt:1: heal: unexpected argument "c1" (it takes no arguments)`},
		{"client c1 member=m1\n----\nx\n\nsetup ttl=2\n----\nready\n", "mine.txt:5: setup: must be the script's first command"},
		{"setup ttl=0\n----\nready\n", "mine.txt:1: setup: ttl=0"},
		{"client c1 member=m4\n----\nx\n", "mine.txt:1: client: member=m4: the script's cluster has 3 members"},
		{"check\n----\nunfenced: MAYBE\n", `mine.txt:3: check: unfenced: want PASS or FAIL, got "MAYBE"`},
		{"acquire c1\n", `mine.txt:1: acquire: want a line "----"`},
		{"# only words\n", "mine.txt: no command"},
		{"client c1 member=m1\n----\nx\n\nacquire c1\n----\nc1: granted token=t1\n", "mine.txt: no check step"},
		{"client c1 member=m1\n----\nx\n\nacquire c7\n----\nc7: granted token=t1\n", "mine.txt:5: acquire: client c7 is not declared"},
		{"setup members=99999\n----\nready\n", "mine.txt:1: setup: members=99999: want a count of members, 1 to 9"},
	} {
		_, err := scenarios.FromScript("mine", "mine.txt", c.text)
		if assert.Error(t, err, c.text) {
			assert.Contains(t, err.Error(), c.err)
		}
	}
}

// A process lock that is slow to start — an interpreter behind a version
// shim, a JVM — is judged as a lock, not by its start-up: its first answer
// after each start gets process.StartupAllowance beyond the operation's own
// timeout. Here etcd's own etcdctl lock, behind 2.5 s of start-up (more than
// the 2 s an acquire may take), on paused-holder: as expected on every
// resource. (Before the allowance, every acquire timed out: ERROR.)
func TestASlowStartingProcessLockIsJudgedAsALock(t *testing.T) {
	t.Parallel() // a few configurations, mostly waiting: side by side with the others
	script, err := filepath.Abs("../lock/etcdlock/etcdctl-lock.sh")
	require.NoError(t, err)
	slow := filepath.Join(t.TempDir(), "slow-start.sh")
	require.NoError(t, os.WriteFile(slow, []byte("sleep 2.5\nexec sh '"+script+"'\n"), 0o644))
	sum, err := scenarios.Run(t.Context(), scenarios.Config{
		Scenarios: []string{"paused-holder"}, Locks: []string{process.ExecPrefix + "sh " + slow},
		Resources: resource.Names(), Seed: 1, Runs: 1,
	})
	require.NoError(t, err)
	require.Len(t, sum.Results, 3)
	if allMatch(t, sum.Results) == 0 {
		assert.Equal(t, 0, sum.ExitCode())
	}
}

// starvedRenewer names a lost lease whose client's own keep-alives, sent
// every TTL/3 by the session, came a TTL or more apart before it was lost:
// the machine starved the lab's client (a fault may have been open beside
// it and taken the blame). The script's output then says what the machine
// did, and it runs again, as for an environment ERROR. "" if none.
// starvedCPU says when the lab saw its own process starved of the CPU
// (history.ObservedStarved) during a run, "" if it never did: a step that
// timed out then (Redlock's acquire, whose validity a slow client spends
// before it is granted) is the machine's doing.
func starvedCPU(events []history.Event) string {
	for _, ev := range events {
		if ev.Type == history.Observed && ev.What == history.ObservedStarved {
			return "the machine starved the lab of the CPU during the run"
		}
	}
	return ""
}

func starvedRenewer(losses []history.Loss) string {
	for _, l := range losses {
		for i := 1; i < len(l.Renewals); i++ {
			if gap := l.Renewals[i] - l.Renewals[i-1]; l.TTL > 0 && gap >= l.TTL && l.Renewals[i-1] < l.AliveUntil {
				return fmt.Sprintf("%s's keep-alives came %v apart, a TTL or more, before its lease was lost", l.Client,
					time.Duration(gap))
			}
		}
	}
	return ""
}
