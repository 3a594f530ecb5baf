package deathsig

import (
	"io"
	"os/exec"
)

// Start starts cmd, a server the lab runs, to be killed with the lab (see
// Set): its output and errors go to out and, when log is not nil, to log
// too. exited is closed once the process has ended and been reaped.
func Start(cmd *exec.Cmd, out, log io.Writer) (exited <-chan struct{}, err error) {
	if log != nil {
		out = io.MultiWriter(out, log)
	}
	cmd.Stdout, cmd.Stderr = out, out
	Set(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }() //nolint:errcheck // its end is seen on done
	return done, nil
}
