package locktest_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/testsize"
)

// gateSection is the heading of docs/gate.md, the page that shows how to
// gate a lock: its part up to the first "## " is run as written.
const gateSection = "# Gate your own lock in CI"

// readmeGate is the gate page's gate section, taken apart: the user's lock,
// their test, and the commands they type.
type readmeGate struct {
	lock, test string
	commands   [][]string
}

// readReadmeGate reads the gate section of docs/gate.md: its Go blocks
// (package mylock and package mylock_test) and the block of go commands.
func readReadmeGate(t *testing.T) readmeGate {
	b, err := os.ReadFile("../docs/gate.md")
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(b), gateSection+"\n")
	require.True(t, ok, "docs/gate.md has no %q section", gateSection)
	sec, _, _ = strings.Cut(sec, "\n## ")
	var g readmeGate
	for _, m := range regexp.MustCompile("(?s)```(\\w*)\n(.*?)```").FindAllStringSubmatch(sec, -1) {
		lang, body := m[1], m[2]
		switch {
		case lang == "go" && strings.Contains(body, "\npackage mylock\n"):
			g.lock = body
		case lang == "go" && strings.HasPrefix(body, "package mylock_test\n"):
			g.test = body
		case lang == "" && strings.HasPrefix(body, "go "):
			sc := bufio.NewScanner(strings.NewReader(body))
			for sc.Scan() {
				line, _, _ := strings.Cut(sc.Text(), "#")
				if f := strings.Fields(line); len(f) > 0 {
					g.commands = append(g.commands, f)
				}
			}
		}
	}
	require.NotEmpty(t, g.lock, "the gate section shows no package mylock")
	require.NotEmpty(t, g.test, "the gate section shows no package mylock_test")
	require.NotEmpty(t, g.commands, "the gate section shows no go commands")
	last := g.commands[len(g.commands)-1]
	require.Equal(t, []string{"go", "test"}, last[:2], "the gate section's commands end in go test")
	return g
}

// module writes the gate page's lock and test, and a test file of the user's
// own (extra), into a new module beside a link to this repository, as the
// page lays them out (../locklab), and runs every command but the last,
// go test, there. It returns the module's directory and go test's
// arguments.
func (g readmeGate) module(t *testing.T, goCmd, extra string) (string, []string) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Symlink(root, filepath.Join(dir, "locklab")))
	mod := filepath.Join(dir, "mylock")
	require.NoError(t, os.Mkdir(mod, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "mylock.go"), []byte(g.lock), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "mylock_test.go"), []byte(g.test), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "extra_test.go"), []byte(extra), 0o644))
	for _, c := range g.commands[:len(g.commands)-1] {
		out, err := goIn(t, mod, goCmd, c[1:]...).CombinedOutput()
		require.NoError(t, err, "%s:\n%s", strings.Join(c, " "), out)
	}
	return mod, g.commands[len(g.commands)-1][1:]
}

// goIn is the go command run in dir, outside any workspace.
func goIn(t *testing.T, dir, goCmd string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(t.Context(), goCmd, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	return cmd
}

// constantTokenTest is a test of the user's own beside the gate page's: the
// page's lock, with every grant's token the same (1), through the same
// gate. It sits in the same module, so both tests build into one binary:
// the lock as written, and a constant token that must fail.
const constantTokenTest = `package mylock_test

import (
	"context"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"example.com/mylock"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/locktest"
)

// constantToken hands out every grant with token 1, and releases the grant
// its lock gave.
type constantToken struct {
	lock.Locker
	held lock.Grant
}

func (c *constantToken) Acquire(ctx context.Context) (lock.Grant, error) {
	g, err := c.Locker.Acquire(ctx)
	if err != nil {
		return g, err
	}
	c.held = g
	g.Token = 1
	return g, nil
}

func (c *constantToken) Release(ctx context.Context, _ lock.Grant) error {
	return c.Locker.Release(ctx, c.held)
}

func TestConstantToken(t *testing.T) {
	locktest.Run(t, func(cli *clientv3.Client, name string, opts lock.Options) (lock.Locker, error) {
		l, err := mylock.New(cli, name, opts)
		if err != nil {
			return nil, err
		}
		return &constantToken{Locker: l}, nil
	}, locktest.Seeds(1, 3), locktest.CompareWith("etcd-mutex"))
}
`

// The gate page's gate, taken literally: its lock (etcd's Mutex with the fix
// the contract asks for) and its test, in a module of their own outside
// this repository, pointed at it with the gate page's commands, pass the whole
// gate; the same lock with a constant token (a test of the user's own
// beside it, built into the same binary) fails it, naming the tokens check
// and what to change, and ends in the summary. The page cannot drift
// from what works.
func TestTheReadmeGateAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and gates a module outside the repository (minutes): not with -short")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: the gate page's commands cannot be run")
	}
	t.Parallel() // mostly building: beside the lessons of the others
	g := readReadmeGate(t)
	mod, args := g.module(t, goCmd, constantTokenTest)

	// The lock as written passes the gate.
	correct := args
	if !testsize.Long() {
		// The lessons the lock's fix is for, on the gate page's seeds: a lock
		// without it fails lost-acquire. The whole gate is CI's
		// (LOCKLAB_LONG=1).
		correct = append(args[:len(args)-1:len(args)-1], "^TestMyLock$/^(lost-acquire|paused-holder)$")
		t.Logf("the gate page's gate on lost-acquire and paused-holder here; %s=1 runs all of it, as written", testsize.Env)
	}
	out, err := goIn(t, mod, goCmd, append(correct, "-count=1")...).CombinedOutput()
	require.NoError(t, err, "the gate page's gate fails its own lock:\n%s", out)
	assert.Contains(t, string(out), "ok")
	gomod, err := os.ReadFile(filepath.Join(mod, "go.mod"))
	require.NoError(t, err)
	assert.NotContains(t, string(gomod), "redis", "an etcd lock's gate pulls Redis modules into the user's go.mod")

	// The same lock with a constant token fails it: one lesson is enough.
	constant := append(args[:len(args)-1:len(args)-1], "^TestConstantToken$/^paused-holder$", "-count=1")
	out, err = goIn(t, mod, goCmd, constant...).CombinedOutput()
	require.Error(t, err, "a lock with a constant token passes the gate page's gate:\n%s", out)
	s := string(out)
	assert.Contains(t, s, "tokens FAIL")
	assert.Contains(t, s, "what to change (tokens): Grant.Token must be")
	assert.Contains(t, s, "the same finding as fenced seed 1")
	assert.Regexp(t, `locktest summary: \d+ of \d+ results not as documented`, s)
	assert.NotContains(t, s, "kept with go test -artifacts", "a report path that is gone when the test ends")
}
