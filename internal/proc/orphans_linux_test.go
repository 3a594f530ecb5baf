//go:build linux

package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/piddir"
)

// frozenLabEnv, set, makes the test binary a lab that starts a program,
// freezes it as a pause does, prints its process group and directory, and
// waits to be killed.
const frozenLabEnv = "LOCKLAB_TEST_FROZEN_LAB"

// serveFrozenLab is the test binary as that lab, when frozenLabEnv is set.
func serveFrozenLab() {
	script := os.Getenv(frozenLabEnv)
	if script == "" {
		return
	}
	p := &Program{Argv: []string{"sh", script}, DirVar: "LOCKLAB_DIR"}
	if _, err := p.Ask(context.Background(), "acquire"); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	p.Stop()
	fmt.Println(p.Group(), p.Dir())
	select {}
}

// A lab killed (SIGKILL) while its program is paused leaves nothing: the
// parent-death SIGTERM cannot act on a stopped process, but the program's
// group, its parent gone, is an orphaned process group with a stopped
// member, to which the kernel sends SIGHUP and SIGCONT — and the program
// ends. The next run's sweep removes its directory.
func TestAProgramPausedWhenTheLabIsKilledEnds(t *testing.T) {
	script := filepath.Join(t.TempDir(), "lock.sh")
	require.NoError(t, os.WriteFile(script, []byte("trap 'exit 0' TERM\nread x\necho granted key=k\nwhile :; do sleep 0.05; done\n"), 0o644))
	self, err := os.Executable()
	require.NoError(t, err)
	lab := exec.Command(self, "-test.run=^$")
	lab.Env = append(os.Environ(), frozenLabEnv+"="+script)
	out, err := lab.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, lab.Start())
	t.Cleanup(func() { // a failed require leaves no lab behind
		if lab.ProcessState == nil {
			lab.Process.Kill()
			lab.Wait()
		}
	})
	var (
		pg  int
		dir string
	)
	_, err = fmt.Fscan(bufio.NewReader(out), &pg, &dir)
	require.NoError(t, err, "the lab prints its program's process group and directory")
	require.NoError(t, lab.Process.Kill())
	lab.Wait() // reaped: a zombie's number still answers, and the sweep would leave its directory
	assert.Eventually(t, func() bool { return !groupLive(-pg) }, 10*time.Second, 10*time.Millisecond,
		"the paused program outlived the lab")
	syscall.Kill(-pg, syscall.SIGKILL) // whatever the assertion says, nothing is left
	piddir.Sweep(filepath.Dir(dir))
	assert.NoDirExists(t, dir, "the next run's sweep leaves the dead lab's directory")
}

func TestMain(m *testing.M) {
	serveFrozenLab()
	os.Exit(m.Run())
}
