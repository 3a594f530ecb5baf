//go:build !linux

package proc

import (
	"context"
	"fmt"
	"runtime"
)

// Supported says why locks cannot run as programs here: the lab needs
// process groups, SIGSTOP and SIGCONT, a parent-death signal and /proc,
// which only Linux gives it.
func Supported() error {
	return fmt.Errorf("lock: locks run as processes (exec:COMMAND, etcdctl) need Linux; this is %s", runtime.GOOS)
}

// Ask refuses: see Supported.
func (l *Program) Ask(context.Context, string) (Answer, error) { return Answer{}, Supported() }

// Stray refuses: see Supported.
func (l *Program) Stray(string, Answer) error { return Supported() }

// Starting reports false: nothing starts here.
func (l *Program) Starting() bool { return false }

// Close does nothing here.
func (l *Program) Close() error { return nil }

// Stop does nothing here.
func (l *Program) Stop() error { return nil }

// Kill does nothing here.
func (l *Program) Kill() error { return nil }

// Continue does nothing here.
func (l *Program) Continue() error { return nil }

// Group is 0 here.
func (l *Program) Group() int { return 0 }

// Dir is "" here.
func (l *Program) Dir() string { return "" }

// GroupLive reports false here.
func GroupLive(int) bool { return false }

// running is never made here.
type running struct{}

// Exited reports false: no program runs here.
func (l *Program) Exited() bool { return false }

// grantLost is nil: no program runs here.
func (l *Program) grantLost() <-chan struct{} { return nil }
