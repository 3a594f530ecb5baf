//go:build linux

package proc

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/locklab/locklab/internal/piddir"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/internal/tailbuf"
)

// Supported says whether locks can run as programs here: on Linux they
// can (process groups, SIGSTOP, a parent-death signal, /proc).
func Supported() error { return nil }

// strayHold is how long, once a program exited, the lab waits for the
// rest of what it wrote to standard error while a child it left holds the
// pipe open.
const strayHold = 200 * time.Millisecond

// stopTimeout bounds how long a process has to leave after SIGTERM (or
// after its standard input closed) before it is killed.
const stopTimeout = StopAllowance / 2

// running is one running process.
type running struct {
	cmd    *exec.Cmd
	dir    string
	stdin  io.WriteCloser
	lines  chan string   // its standard output, line by line
	exited chan struct{} // closed once it has exited
	gone   chan struct{} // closed once it is stopped and forgotten
	// stopOnce makes stop's work happen once.
	stopOnce sync.Once
	stderr   *tailbuf.Buffer
	started  time.Time
	// answered is set once it has answered a command.
	answered atomic.Bool
	// up is closed once it has said it is up: a comment line (see
	// StartupAllowance), or its first answer.
	up     chan struct{}
	upOnce sync.Once
	// readErr says why its output stopped being read (a line past
	// MaxAnswer); set before lines closes.
	readErr error
	// told is the Lost of the grant it answered last (lost.go).
	told told
}

func (l *Program) start() (*running, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p != nil {
		return l.p, nil
	}
	dir, env, err := l.prepare()
	if err != nil {
		return nil, err
	}
	becomeSubreaper()
	cmd := exec.Command(l.Argv[0], l.Argv[1:]...)
	cmd.Env = env
	// Its own process group, so that a pause or a stop reaches whatever it
	// starts; SIGTERM if the lab dies without stopping it (a crash, a
	// SIGKILL), so that it does not outlive the lab.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	p := &running{cmd: cmd, dir: dir, lines: make(chan string, 16), exited: make(chan struct{}), gone: make(chan struct{}), stderr: &tailbuf.Buffer{},
		started: time.Now(), up: make(chan struct{})}
	cmd.Stderr = p.stderr
	// A child it left running outside its group (setsid) may hold its
	// standard error open: Wait does not wait for that child's end, which
	// comes only when the lab ends it (see endStrays).
	cmd.WaitDelay = strayHold
	// Standard output through a pipe of our own, not cmd.StdoutPipe: Wait
	// closes that one as soon as the process exits, and its last answer
	// could be lost unread.
	out, w, err := os.Pipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("lock: %w", err)
	}
	cmd.Stdout = w
	if p.stdin, err = cmd.StdinPipe(); err == nil {
		err = cmd.Start()
	}
	w.Close() // the process has its own copy
	if err != nil {
		out.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("lock: starting %s: %w", l.Argv[0], err)
	}
	go func() {
		defer out.Close()
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 4<<10), MaxAnswer)
		defer func() {
			if errors.Is(sc.Err(), bufio.ErrTooLong) {
				p.readErr = fmt.Errorf("printed a line longer than %d bytes on its standard output", MaxAnswer)
			}
		}()
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			p.upOnce.Do(func() { close(p.up) })
			if strings.HasPrefix(line, "#") || p.told.read(line) {
				continue
			}
			select {
			case p.lines <- line:
			case <-p.gone: // nobody will read it
				return
			}
		}
	}()
	go func() {
		cmd.Wait()
		p.told.tell() // what it held went with its process
		close(p.exited)
	}()
	l.p = p
	return p, nil
}

// prepare makes the program's own directory, with the tools offered in
// it, and says what environment the program starts with.
func (l *Program) prepare() (dir string, env []string, err error) {
	if dir, err = piddir.Make("", "exec"); err != nil {
		return "", nil, fmt.Errorf("lock: %w", err)
	}
	env = append(os.Environ(), l.Env...)
	marks, err := linkTools(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("lock: %w", err)
	}
	env = append(env, marks...)
	if l.Setup != nil {
		if err := l.Setup(dir); err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
	}
	return dir, append(env, l.DirVar+"="+dir, MarkVar+"="+dir, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH")), nil
}

// Ask sends one command and returns the answer. If ctx ends first, the
// process is stopped (SIGTERM: it gives up what it waits for or holds) and
// ctx's error returned; the next command starts a new one.
func (l *Program) Ask(ctx context.Context, command string) (Answer, error) {
	p, err := l.start()
	if err != nil {
		return Answer{}, err
	}
	select {
	case <-p.exited: // by itself: the lab stops a program only by forgetting it
		return Answer{}, l.exitedBefore(p, command)
	default:
	}
	select {
	case line, ok := <-p.lines:
		if ok { // printed before it was asked anything
			return Answer{}, l.stray(p, command, line, "before it was asked to "+command)
		}
		return Answer{}, l.died(p, command, "closed its output")
	default:
	}
	if _, err := io.WriteString(p.stdin, command+"\n"); err != nil {
		return Answer{}, l.died(p, command, "stopped reading its input")
	}
	up, own := upWait(ctx, p)
	var cut <-chan time.Time
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return Answer{}, l.died(p, command, "closed its output")
			}
			p.answered.Store(true)
			return Parse(line), nil
		case <-up:
			// Up: its silence from now on is its waiting, which has own.
			up = nil
			t := time.NewTimer(own)
			defer t.Stop()
			cut = t.C
		case <-cut:
			l.stop(p, syscall.SIGTERM)
			return Answer{}, fmt.Errorf("lock: %s was up and gave no answer within %v, asked to %s: %w",
				l.Argv[0], own, command, context.DeadlineExceeded)
		case <-ctx.Done():
			l.stop(p, syscall.SIGTERM)
			if !p.answered.Load() && !isUp(p) {
				return Answer{}, fmt.Errorf("lock: %s printed nothing within %v of starting, asked to %s (%w)",
					l.Argv[0], time.Since(p.started).Round(time.Millisecond), command, ctx.Err())
			}
			return Answer{}, ctx.Err()
		}
	}
}

// upWait says, for a command whose ctx allows for p's start-up
// (WithStartup) while p has answered nothing yet, when p is up and how long
// the command may wait from then: its own time. Otherwise up is nil.
func upWait(ctx context.Context, p *running) (up <-chan struct{}, own time.Duration) {
	own, ok := startupOwn(ctx)
	if !ok || p.answered.Load() {
		return nil, 0
	}
	return p.up, own
}

// isUp reports whether p has said it is up.
func isUp(p *running) bool {
	select {
	case <-p.up:
		return true
	default:
		return false
	}
}

// Starting reports whether the next command goes to a process that has
// answered none yet and has not said it is up: not started, or started
// and silent so far, whose answer may take its start-up time too.
func (l *Program) Starting() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.p == nil || !l.p.answered.Load() && !isUp(l.p)
}

// stray reports a line that is no answer to command — printed unasked (a
// banner, a log line), or instead of the answer — and stops the process:
// the lines after it would answer the wrong commands. The next command
// starts it again.
func (l *Program) stray(p *running, command, line, when string) error {
	l.stop(p, syscall.SIGTERM)
	return fmt.Errorf("lock: %s printed %q %s, which is no answer of the protocol (one line per command: granted, "+
		"released or error; print anything else to standard error, or start it with #): it was stopped, and starts "+
		"again for the next command", l.Argv[0], truncate(line), when)
}

// died reports a process that will not answer — it exited, or did what
// and is still running stopTimeout later — and stops and forgets it.
func (l *Program) died(p *running, command, what string) error {
	exited := groupGone(-p.cmd.Process.Pid, p.exited, stopTimeout)
	l.stop(p, syscall.SIGTERM)
	msg := p.stderr.LastError()
	switch {
	case p.readErr != nil && !exited:
		return fmt.Errorf("lock: %s %v, asked to %s, and was stopped", l.Argv[0], p.readErr, command)
	case p.readErr != nil:
		return fmt.Errorf("lock: %s %v, asked to %s", l.Argv[0], p.readErr, command)
	case !exited:
		return fmt.Errorf("lock: %s %s without answering %q, and was stopped: %s", l.Argv[0], what, command, cmp.Or(msg, "(no error output)"))
	case msg == "":
		msg = p.cmd.ProcessState.String()
	}
	return fmt.Errorf("lock: %s exited without answering %q: %s", l.Argv[0], command, msg)
}

// Exited reports whether the program has exited by itself and the lab
// has not yet asked it anything since (see ErrExited).
func (l *Program) Exited() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p == nil {
		return false
	}
	select {
	case <-l.p.exited:
		return true
	default:
		return false
	}
}

// exitedBefore reports a program that had exited by itself before it was
// asked command — a library that ends its process when it learns its lock
// was lost, a fail-stop design — with what it said of why, and forgets
// it: ErrExited, so that a release of what it held is "not held".
func (l *Program) exitedBefore(p *running, command string) error {
	l.stop(p, syscall.SIGTERM)
	msg := p.stderr.LastError()
	if msg == "" {
		msg = p.cmd.ProcessState.String()
	}
	return fmt.Errorf("%w: %s had exited before it was asked to %s (%s)", ErrExited, l.Argv[0], command, msg)
}

// stop ends p's process group — sig first, then SIGKILL if anything of it
// is left after stopTimeout — and forgets p. A group already gone is not
// signalled: its number may belong to another process by now.
func (l *Program) stop(p *running, sig syscall.Signal) {
	l.mu.Lock()
	if l.p == p {
		l.p = nil
	}
	l.mu.Unlock()
	// Once, however many callers (Close, and an ask that sees it die); the
	// others wait until it is done.
	p.stopOnce.Do(func() {
		pg := -p.cmd.Process.Pid
		if !groupGone(pg, p.exited, 0) {
			if sig != syscall.SIGKILL {
				syscall.Kill(pg, syscall.SIGCONT) // a stopped process cannot act on sig
			}
			syscall.Kill(pg, sig)
			if !groupGone(pg, p.exited, stopTimeout) {
				syscall.Kill(pg, syscall.SIGKILL)
				groupGone(pg, p.exited, stopTimeout)
			}
		}
		// What it started and left outside its group (setsid, a double
		// fork) ends with it.
		endStrays(MarkVar+"="+p.dir, stopTimeout)
		p.stdin.Close()
		close(p.gone)
		os.RemoveAll(p.dir)
	})
}

// groupLive reports whether a process of group pg (negative: -pgid) still
// runs. A zombie does not: it is dead, and waits only to be reaped by
// whoever adopted it (an orphan of a killed script is adopted by PID 1,
// which may take its time), and while it waits its number is not reused.
func groupLive(pg int) bool {
	if syscall.Kill(pg, 0) != nil {
		return false
	}
	live := false
	if !eachMember(pg, func(state string) { live = live || (state != "Z" && state != "X") }) {
		return true // cannot look closer: it is there
	}
	return live
}

// eachMember calls f with the state (R, S, T, Z…) of each process of group
// pg (negative: -pgid), from /proc; false if /proc cannot be read.
func eachMember(pg int, f func(state string)) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	want := strconv.Itoa(-pg)
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp …: comm may hold anything but ')'.
		s := string(raw)
		fs := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fs) >= 3 && fs[2] == want {
			f(fs[0])
		}
	}
	return true
}

// groupGone waits until the process group's leader has exited and no
// process of the group runs any more, or d has passed (0: only looks).
func groupGone(pg int, exited <-chan struct{}, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	select {
	case <-exited:
	default:
		if d == 0 {
			return false
		}
		select {
		case <-exited:
		case <-deadline.C:
			return false
		}
	}
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for groupLive(pg) {
		if d == 0 {
			return false
		}
		select {
		case <-t.C:
		case <-deadline.C:
			return false
		}
	}
	return true
}

// Stray is the error of an answer to command that is no answer of the
// protocol, and stops the program that gave it (see stray).
func (l *Program) Stray(command string, a Answer) error {
	l.mu.Lock()
	p := l.p
	l.mu.Unlock()
	if p == nil {
		return fmt.Errorf("lock: %s answered %s with %q, which is no answer of the protocol", l.Argv[0], command, truncate(a.Line))
	}
	return l.stray(p, command, a.Line, "when asked to "+command)
}

// Close stops the program: SIGTERM (it gives up what it holds or waits
// for, and exits), then SIGKILL for what is left of its group after
// stopTimeout.
func (l *Program) Close() error { return l.end(syscall.SIGTERM) }

// Stop freezes the process group (SIGSTOP) and returns once every process
// of it has stopped, or stopSettle has passed (a process in an
// uninterruptible sleep stops as it wakes). A pause is then one in fact:
// and were the lab killed the next moment, the group, orphaned with its
// members stopped, is sent SIGHUP and SIGCONT by the kernel and ends — a
// member that had yet to stop would stop after that, and stay.
func (l *Program) Stop() error {
	if err := l.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	if pg := l.Group(); pg != 0 {
		// The kernel says nothing when a stop takes effect: look.
		ctx, cancel := context.WithTimeout(context.Background(), stopSettle)
		defer cancel()
		poll.Until(ctx, "the group to stop", time.Millisecond, func(context.Context) (bool, error) { //nolint:errcheck // bounded: a member that has not stopped by then stops as it wakes
			return groupStopped(-pg), nil
		})
	}
	return nil
}

// stopSettle bounds Stop's wait for its SIGSTOP to take effect.
const stopSettle = time.Second

// groupStopped reports whether no process of group pg (negative: -pgid)
// runs: each is stopped, or dead.
func groupStopped(pg int) bool {
	running := false
	eachMember(pg, func(state string) {
		running = running || (state != "T" && state != "t" && state != "Z" && state != "X")
	})
	return !running
}

// Kill ends the process group with SIGKILL and waits until it is gone.
// The next command starts the program again.
func (l *Program) Kill() error { return l.end(syscall.SIGKILL) }

// end stops the running process, if any, starting with sig (see stop).
func (l *Program) end(sig syscall.Signal) error {
	l.mu.Lock()
	p := l.p
	l.mu.Unlock()
	if p != nil {
		l.stop(p, sig)
	}
	return nil
}

// Continue undoes Stop (SIGCONT).
func (l *Program) Continue() error { return l.signal(syscall.SIGCONT) }

func (l *Program) signal(sig syscall.Signal) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p == nil || groupGone(-l.p.cmd.Process.Pid, l.p.exited, 0) {
		return nil
	}
	return syscall.Kill(-l.p.cmd.Process.Pid, sig)
}

// Group is the process group of the running program, 0 while none runs.
func (l *Program) Group() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p == nil {
		return 0
	}
	return l.p.cmd.Process.Pid
}

// Dir is the running program's own directory, "" while none runs.
func (l *Program) Dir() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p == nil {
		return ""
	}
	return l.p.dir
}

// GroupLive reports whether a process of group pg still runs (a zombie
// does not).
func GroupLive(pg int) bool { return groupLive(-pg) }

// grantLost is the Lost of the grant the running process answered last
// (nil: none stands, or nothing runs).
func (l *Program) grantLost() <-chan struct{} {
	l.mu.Lock()
	p := l.p
	l.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.told.latest()
}
