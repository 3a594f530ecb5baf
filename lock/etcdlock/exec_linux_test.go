package etcdlock_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/etcdlock"
	"github.com/locklab/locklab/lock/process"
)

// groupAlive reports whether any process of group pg still runs: a dead
// one waiting to be reaped by whoever adopted it does not.
func groupAlive(pg int) bool { return etcdlock.GroupLive(pg) }

// A pause of a lock run as a process is a real one: SIGSTOP freezes the
// process group — here the shell script and the etcdctl it runs, both in
// another language than the lab — so its keep-alives stop with no link cut
// at all; the server ends the lease and grants the lock to the next client;
// after SIGCONT, the frozen holder finds its lock lost.
func TestExecPauseIsSIGSTOP(t *testing.T) {
	t.Parallel() // on a cluster of its own
	c := start(t)
	_, l1 := locker(t, c, "etcdctl", "c1", "stop")
	_, l2 := locker(t, c, "etcdctl", "c2", "stop")
	g1, err := l1.Acquire(ctx(t))
	require.NoError(t, err)
	require.NotZero(t, g1.Token, "the token is read from the key etcdctl prints")
	require.NotZero(t, g1.Lease)
	pg := etcdlock.ProcessGroup(l1)
	require.NotZero(t, pg)

	p, ok := l1.(process.Program)
	require.True(t, ok, "a lock run as a process can be stopped")
	require.NoError(t, p.Stop())
	require.Eventually(t, func() bool { return procState(t, pg) == "T" }, 5*time.Second, time.Millisecond, "the script is stopped")
	require.NoError(t, c.WaitLeaseGone(ctx(t), clientv3.LeaseID(g1.Lease)), "a stopped process keeps nothing alive")

	g2, err := l2.Acquire(ctx(t))
	require.NoError(t, err)
	assert.Greater(t, g2.Token, g1.Token)

	require.NoError(t, p.Continue())
	err = l1.Release(ctx(t), g1)
	if err != nil {
		assert.ErrorIs(t, err, lock.ErrNotHeld, "etcdctl saw its session end")
	}
	require.NoError(t, l2.Release(ctx(t), g2))
}

// procState is the state letter of process pid (R, S, T for stopped…).
func procState(t *testing.T, pid int) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	require.NoError(t, err)
	// pid (comm) S …: the state follows the last ')'.
	s := string(raw)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ')' {
			return s[i+2 : i+3]
		}
	}
	return ""
}

// Closing a lock run as a process leaves no process behind: not the holder,
// not a waiter, not a stopped one; nor one whose acquire was abandoned.
func TestExecLeavesNoProcess(t *testing.T) {
	t.Parallel() // on a cluster of its own
	c := start(t)
	_, l1 := locker(t, c, "etcdctl", "c1", "leave")
	_, l2 := locker(t, c, "etcdctl", "c2", "leave")
	_, l3 := locker(t, c, "etcdctl", "c3", "leave")
	_, err := l1.Acquire(ctx(t))
	require.NoError(t, err)
	pg1 := etcdlock.ProcessGroup(l1)

	// c2 gives up waiting: its process is stopped, SIGTERM then SIGKILL.
	short, cancel := context.WithTimeout(ctx(t), 300*time.Millisecond)
	_, err = l2.Acquire(short)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Zero(t, etcdlock.ProcessGroup(l2), "an abandoned acquire stops the process")

	// c3 waits in the background; c1 is frozen.
	waiting := make(chan error, 1)
	go func() {
		_, err := l3.Acquire(ctx(t))
		waiting <- err
	}()
	require.Eventually(t, func() bool { return etcdlock.ProcessGroup(l3) != 0 }, 10*time.Second, 5*time.Millisecond)
	pg3 := etcdlock.ProcessGroup(l3)
	require.NoError(t, l1.(process.Program).Stop())

	require.NoError(t, l1.Close())
	require.NoError(t, l3.Close())
	<-waiting
	for _, pg := range []int{pg1, pg3} {
		assert.False(t, groupAlive(pg), "process group %d outlived its lock", pg)
	}
}

// A program that is not there, or answers nonsense, is an error that says
// so — never a grant.
func TestExecBadProgram(t *testing.T) {
	t.Parallel() // on a cluster of its own
	c := start(t)
	dir := t.TempDir()
	for i, tc := range []struct{ script, want string }{
		{"", "No such file"},
		{"read x; echo oops >&2", "exited without answering \"acquire\": oops"},
		{"read x; echo granted; read x", "neither key nor token"},
		{"read x; echo yes; read x", `printed "yes" when asked to acquire, which is no answer of the protocol`},
		{"read x; head -c 70000 /dev/zero | tr '\\0' x; echo; read x", "printed a line longer than 65536 bytes on its standard output, asked to acquire"},
		{"read x; echo granted token=abc; read x", "token in"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			path := filepath.Join(dir, strconv.Itoa(i+1)+".sh")
			if tc.script != "" {
				require.NoError(t, os.WriteFile(path, []byte(tc.script), 0o644))
			}
			_, l := locker(t, c, "exec:sh "+path, "c"+strconv.Itoa(i+1), "bad")
			_, err := l.Acquire(ctx(t))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A program that prints a line the protocol does not know — a banner as it
// starts — gets an error that names the line, and is started again: the
// lines after it would otherwise answer the wrong commands (an acquire
// answered by the banner, the release by the acquire's answer).
func TestExecStrayLineRestartsTheProgram(t *testing.T) {
	t.Parallel() // on a cluster of its own
	c := start(t)
	dir := t.TempDir()
	inner, err := filepath.Abs("etcdctl-lock.sh")
	require.NoError(t, err)
	// The first start prints a banner; the ones after do not.
	banner := filepath.Join(dir, "banner.sh")
	require.NoError(t, os.WriteFile(banner, []byte(`[ -e "$1" ] || { touch "$1"; echo "my-lock 1.0 ready"; }`+"\n"+
		`exec sh "`+inner+`"`+"\n"), 0o644))
	cl, err := c.NewClient("c1", c.Members()[0])
	require.NoError(t, err)
	f, err := etcdlock.Exec("sh " + banner + " " + filepath.Join(dir, "started"))
	require.NoError(t, err)
	l, err := f(cl.Etcd(), "stray", lock.Options{TTL: 5})
	require.NoError(t, err)
	defer l.Close()
	_, err = l.Acquire(ctx(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `printed "my-lock 1.0 ready"`)
	assert.Contains(t, err.Error(), "starts again for the next command")
	g, err := l.Acquire(ctx(t))
	require.NoError(t, err, "started again, it answers its commands")
	require.NoError(t, l.Release(ctx(t), g), "and its release is the release's answer")
}

// A grant whose answer names its lease, but whose key the lab finds on
// another lease when it reads the token, ended before the lab could read
// it: the key is the next holder's, and so would the token be. It is the
// session's end, never a grant with the next holder's token.
func TestExecTokenIsNeverTheNextHolders(t *testing.T) {
	t.Parallel() // on a cluster of its own
	c := start(t)
	cl, err := c.NewClient("c1", c.Members()[0])
	require.NoError(t, err)
	next, err := cl.Etcd().Grant(ctx(t), 30)
	require.NoError(t, err)
	_, err = cl.Etcd().Put(ctx(t), "held", "", clientv3.WithLease(next.ID))
	require.NoError(t, err)
	dir := t.TempDir()
	for i, tc := range []struct {
		lease int64
		err   error
	}{{int64(next.ID) + 1, lock.ErrSessionExpired}, {int64(next.ID), nil}} {
		path := filepath.Join(dir, strconv.Itoa(i)+".sh")
		require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf("read x; echo granted key=held lease=%d; read x\n", tc.lease)), 0o644))
		f, err := etcdlock.Exec("sh " + path)
		require.NoError(t, err)
		l, err := f(cl.Etcd(), "next", lock.Options{TTL: 5})
		require.NoError(t, err)
		g, err := l.Acquire(ctx(t))
		l.Close()
		if tc.err != nil {
			require.ErrorIs(t, err, tc.err)
			assert.Contains(t, err.Error(), "now rests on lease")
			continue
		}
		require.NoError(t, err)
		assert.NotZero(t, g.Token, "the key rests on the lease the answer named: its token is the grant's")
	}
}

// orphanEnv, set, makes the test binary the lab process of
// TestExecDiesWithTheLab: it waits for an etcdctl lock at the endpoint the
// variable names, prints the lock's process group and blocks until killed.
const orphanEnv = "LOCKLAB_TEST_ORPHAN"

// serveOrphan is the test binary as such a lab process, when orphanEnv is
// set: it never returns (its parent test kills it).
func serveOrphan() {
	if os.Getenv(orphanEnv) == "" {
		return
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{os.Getenv(orphanEnv)}, Logger: zap.NewNop()})
	if err != nil {
		panic(err)
	}
	l, err := etcdlock.NewEtcdctl(cli, "orphan", lock.Options{TTL: 5})
	if err != nil {
		panic(err)
	}
	go l.Acquire(context.Background()) // waits: the parent holds the lock
	for etcdlock.ProcessGroup(l) == 0 {
		time.Sleep(time.Millisecond) // the process is started by that goroutine
	}
	fmt.Println(etcdlock.ProcessGroup(l), etcdlock.ProcessDir(l))
	select {}
}

// A lab that dies without stopping its lock processes — killed, crashed —
// leaves none behind: each gets SIGTERM as its parent dies, and the
// etcdctl lock takes its waiting etcdctl along.
func TestExecDiesWithTheLab(t *testing.T) {
	t.Parallel() // on a cluster of its own
	c := start(t)
	_, holder := locker(t, c, "etcd-mutex", "holder", "orphan")
	_, err := holder.Acquire(ctx(t))
	require.NoError(t, err)

	self, err := os.Executable()
	require.NoError(t, err)
	lab := exec.Command(self, "-test.run=^$")
	lab.Env = append(os.Environ(), orphanEnv+"="+c.Endpoints()[0])
	out, err := lab.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, lab.Start())
	var (
		pg  int
		dir string
	)
	_, err = fmt.Fscan(out, &pg, &dir)
	require.NoError(t, err, "the lab prints its lock's process group")
	require.Eventually(t, func() bool { return keys(t, c, "orphan") == 2 }, wait, 5*time.Millisecond,
		"the lab's etcdctl waits behind the holder")

	require.NoError(t, lab.Process.Kill())
	lab.Wait()
	require.Eventually(t, func() bool { return !groupAlive(pg) }, wait, 5*time.Millisecond,
		"the lock's processes outlived the lab")
	// Withdrawn as etcdctl left, or — if the signal caught it between its
	// queueing Txn and the answer, when etcd's Mutex leaves its key — gone
	// with the lease nobody keeps alive any more.
	assert.Eventually(t, func() bool { return keys(t, c, "orphan") == 1 }, wait, 5*time.Millisecond,
		"the waiting etcdctl's key outlived the lab")
	assert.NoDirExists(t, dir, "the dead lab's process left its directory")
}

// A crash of a lock run as a process is SIGKILL of its process group: it
// gives up nothing — its key and lease stay on the server, until the lease
// runs out for want of keep-alives — and the next acquire starts a new
// process on a new lease.
func TestExecKillIsSIGKILL(t *testing.T) {
	t.Parallel() // on a cluster of its own
	c := start(t)
	_, l1 := locker(t, c, "etcdctl", "c1", "kill")
	g1, err := l1.Acquire(ctx(t))
	require.NoError(t, err)
	pg := etcdlock.ProcessGroup(l1)
	require.NotZero(t, pg)

	require.NoError(t, l1.(process.Program).Kill())
	assert.False(t, groupAlive(pg), "Kill returns once the group is gone")
	assert.Zero(t, etcdlock.ProcessGroup(l1))
	alive, err := c.LeaseAlive(ctx(t), clientv3.LeaseID(g1.Lease))
	require.NoError(t, err)
	assert.True(t, alive, "a killed process revokes nothing")
	assert.EqualValues(t, 1, keys(t, c, "kill"), "its key stays")
	require.NoError(t, c.WaitLeaseGone(ctx(t), clientv3.LeaseID(g1.Lease)), "nothing keeps a killed process's lease alive")

	g2, err := l1.Acquire(ctx(t))
	require.NoError(t, err, "the next acquire starts a new process")
	assert.Greater(t, g2.Token, g1.Token)
	assert.NotEqual(t, g1.Lease, g2.Lease)
	require.NoError(t, l1.Release(ctx(t), g2))
}

// A process that prints nothing is reported as such, in its own words, once
// the caller's deadline ends — and a lock whose process has answered
// nothing yet says it is starting (the lab gives it process.StartupAllowance).
// Once it has answered, it is not.
func TestExecSilentStartIsNamed(t *testing.T) {
	t.Parallel() // on a cluster of its own
	c := start(t)
	cl, err := c.NewClient("c1", c.Members()[0])
	require.NoError(t, err)
	f, err := etcdlock.Exec("sleep 30")
	require.NoError(t, err)
	l, err := f(cl.Etcd(), "silent", lock.Options{TTL: 1})
	require.NoError(t, err)
	defer l.Close()
	assert.True(t, l.(process.Program).Starting(), "not started yet")
	short, cancel := context.WithTimeout(ctx(t), 300*time.Millisecond)
	defer cancel()
	_, err = l.Acquire(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "sleep printed nothing within")
	assert.Contains(t, err.Error(), "of starting, asked to acquire")

	_, e := locker(t, c, "etcdctl", "c2", "silent")
	assert.True(t, e.(process.Program).Starting())
	g, err := e.Acquire(ctx(t))
	require.NoError(t, err)
	assert.False(t, e.(process.Program).Starting(), "it has answered")
	require.NoError(t, e.Release(ctx(t), g))
}

// A program that says it is up (a comment line) ends its start-up there:
// asked with the start-up allowance (process.WithStartup), its silence after
// is its waiting, which has the operation's own time from then.
func TestExecUpEndsTheStartup(t *testing.T) {
	t.Parallel() // on a cluster of its own
	c := start(t)
	cl, err := c.NewClient("c1", c.Members()[0])
	require.NoError(t, err)
	prog := filepath.Join(t.TempDir(), "up-and-silent")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\necho '# ready'\nexec sleep 30\n"), 0o755))
	f, err := etcdlock.Exec(prog)
	require.NoError(t, err)
	l, err := f(cl.Etcd(), "up", lock.Options{TTL: 1})
	require.NoError(t, err)
	defer l.Close()
	require.True(t, l.(process.Program).Starting(), "not started yet")
	actx, cancel := process.WithStartup(ctx(t), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err = l.Acquire(actx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "was up and gave no answer within 300ms, asked to acquire")
	assert.Less(t, time.Since(began), process.StartupAllowance, "the allowance left once it was up is not waited for")
	assert.NoError(t, actx.Err(), "the caller's context had time left")
}
