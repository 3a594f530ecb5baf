package serverproc

import (
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/locklab/locklab/internal/deathsig"
	"github.com/locklab/locklab/internal/tailbuf"
)

// Proc is one running server process.
type Proc struct {
	cmd    *exec.Cmd
	exited <-chan struct{}
	out    *tailbuf.Buffer
}

// Start starts cmd, its output kept in out (and copied to log, if not nil).
func Start(cmd *exec.Cmd, out *tailbuf.Buffer, log io.Writer) (*Proc, error) {
	exited, err := deathsig.Start(cmd, out, log)
	if err != nil {
		return nil, err
	}
	return &Proc{cmd: cmd, exited: exited, out: out}, nil
}

// Exited is closed once the process has ended and been reaped.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Died says whether the process has exited and, if so, the last lines it
// printed. Its owner forgets (sets to nil) a Proc it ended, so that Died
// tells a death the lab did not cause: a nil Proc did not die.
func (p *Proc) Died() (bool, string) {
	if p == nil {
		return false, ""
	}
	select {
	case <-p.exited:
		return true, p.out.Last(3)
	default:
		return false, ""
	}
}

// Kill ends the process at once (SIGKILL: nothing is saved, as in a crash)
// and waits for it to be gone.
func (p *Proc) Kill() {
	if p == nil {
		return
	}
	p.cmd.Process.Kill() //nolint:errcheck // it may have exited already
	<-p.exited
}

// Stop asks the process to stop (SIGINT) and kills it if it has not within
// grace.
func (p *Proc) Stop(grace time.Duration) {
	if p == nil {
		return
	}
	p.cmd.Process.Signal(os.Interrupt) //nolint:errcheck // it may have exited already
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.Kill()
	}
}

// Pid is the process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }
