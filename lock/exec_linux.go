//go:build linux

package lock

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

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/internal/piddir"
	"github.com/locklab/locklab/internal/tailbuf"
)

// processSupport says whether locks can run as processes here: on Linux
// they can (process groups, SIGSTOP, a parent-death signal, /proc).
func processSupport() error { return nil }

// stopTimeout bounds how long a process has to leave after SIGTERM (or
// after its standard input closed) before it is killed.
const stopTimeout = StopAllowance / 2

// execFactory runs argv; setup, if not nil, prepares the process's own
// directory before it starts (the built-in etcdctl lock writes its script
// there).
func execFactory(argv []string, setup func(dir string) error) Factory {
	return func(client *clientv3.Client, name string, opts Options) (Locker, error) {
		opts, err := opts.withDefaults()
		if err != nil {
			return nil, err
		}
		eps := client.Endpoints()
		if len(eps) == 0 {
			return nil, fmt.Errorf("lock: %s: the client has no endpoint", argv[0])
		}
		return &execLock{
			argv: argv, setup: setup, cli: client,
			env: []string{EnvEndpoints + "=" + eps[0], EnvLock + "=" + opts.Prefix + name, EnvTTL + "=" + strconv.Itoa(opts.TTL)},
		}, nil
	}
}

// execLock drives one process over the protocol above.
type execLock struct {
	argv  []string
	setup func(dir string) error
	env   []string
	cli   *clientv3.Client

	mu    sync.Mutex // guards p against Stop, Continue and Close
	p     *proc
	grant Grant // the latest grant
	lease clientv3.LeaseID
}

// proc is one running process.
type proc struct {
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
}

func (l *execLock) start() (*proc, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p != nil {
		return l.p, nil
	}
	dir, err := piddir.Make("", "exec")
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	env := append(os.Environ(), l.env...)
	marks, err := linkTools(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	env = append(env, marks...)
	if l.setup != nil {
		if err := l.setup(dir); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	env = append(env, EnvDir+"="+dir, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd := exec.Command(l.argv[0], l.argv[1:]...)
	cmd.Env = env
	// Its own process group, so that a pause or a stop reaches whatever it
	// starts; SIGTERM if the lab dies without stopping it (a crash, a
	// SIGKILL), so that it does not outlive the lab.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	p := &proc{cmd: cmd, dir: dir, lines: make(chan string, 16), exited: make(chan struct{}), gone: make(chan struct{}), stderr: &tailbuf.Buffer{},
		started: time.Now(), up: make(chan struct{})}
	cmd.Stderr = p.stderr
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
		return nil, fmt.Errorf("lock: starting %s: %w", l.argv[0], err)
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
			if strings.HasPrefix(line, "#") {
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
		close(p.exited)
	}()
	l.p = p
	return p, nil
}

// ask sends one command and returns the answer. If ctx ends first, the
// process is stopped (SIGTERM: it gives up what it waits for or holds) and
// ctx's error returned; the next command starts a new one.
func (l *execLock) ask(ctx context.Context, command string) (string, error) {
	p, err := l.start()
	if err != nil {
		return "", err
	}
	select {
	case line, ok := <-p.lines:
		if ok { // printed before it was asked anything
			return "", l.stray(p, command, line, "before it was asked to "+command)
		}
		return "", l.died(p, command, "closed its output")
	default:
	}
	if _, err := io.WriteString(p.stdin, command+"\n"); err != nil {
		return "", l.died(p, command, "stopped reading its input")
	}
	up, own := upWait(ctx, p)
	var cut <-chan time.Time
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return "", l.died(p, command, "closed its output")
			}
			p.answered.Store(true)
			return line, nil
		case <-up:
			// Up: its silence from now on is its waiting, which has own.
			up = nil
			t := time.NewTimer(own)
			defer t.Stop()
			cut = t.C
		case <-cut:
			l.stop(p, syscall.SIGTERM)
			return "", fmt.Errorf("lock: %s was up and gave no answer within %v, asked to %s: %w",
				l.argv[0], own, command, context.DeadlineExceeded)
		case <-ctx.Done():
			l.stop(p, syscall.SIGTERM)
			if !p.answered.Load() && !isUp(p) {
				return "", fmt.Errorf("lock: %s printed nothing within %v of starting, asked to %s (%w)",
					l.argv[0], time.Since(p.started).Round(time.Millisecond), command, ctx.Err())
			}
			return "", ctx.Err()
		}
	}
}

// upWait says, for a command whose ctx allows for p's start-up
// (WithStartup) while p has answered nothing yet, when p is up and how long
// the command may wait from then: its own time. Otherwise up is nil.
func upWait(ctx context.Context, p *proc) (up <-chan struct{}, own time.Duration) {
	own, ok := startupOwn(ctx)
	if !ok || p.answered.Load() {
		return nil, 0
	}
	return p.up, own
}

// isUp reports whether p has said it is up.
func isUp(p *proc) bool {
	select {
	case <-p.up:
		return true
	default:
		return false
	}
}

// Starting reports whether the next command goes to a process that has
// answered none yet (see Process).
func (l *execLock) Starting() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.p == nil || !l.p.answered.Load() && !isUp(l.p)
}

// MaxAnswer is the longest line a lock process may print: an answer is a
// few words.
const MaxAnswer = 64 << 10

// stray reports a line that is no answer to command — printed unasked (a
// banner, a log line), or instead of the answer — and stops the process:
// the lines after it would answer the wrong commands. The next command
// starts it again.
func (l *execLock) stray(p *proc, command, line, when string) error {
	l.stop(p, syscall.SIGTERM)
	return fmt.Errorf("lock: %s printed %q %s, which is no answer of the protocol (one line per command: granted, "+
		"released or error; print anything else to standard error, or start it with #): it was stopped, and starts "+
		"again for the next command", l.argv[0], truncate(line), when)
}

// truncate shortens a line for a message.
func truncate(line string) string {
	if len(line) > 200 {
		return line[:200] + "…"
	}
	return line
}

// died reports a process that will not answer — it exited, or did what
// and is still running stopTimeout later — and stops and forgets it.
func (l *execLock) died(p *proc, command, what string) error {
	exited := groupGone(-p.cmd.Process.Pid, p.exited, stopTimeout)
	l.stop(p, syscall.SIGTERM)
	msg := p.stderr.Last(1)
	switch {
	case p.readErr != nil && !exited:
		return fmt.Errorf("lock: %s %v, asked to %s, and was stopped", l.argv[0], p.readErr, command)
	case p.readErr != nil:
		return fmt.Errorf("lock: %s %v, asked to %s", l.argv[0], p.readErr, command)
	case !exited:
		return fmt.Errorf("lock: %s %s without answering %q, and was stopped: %s", l.argv[0], what, command, cmp.Or(msg, "(no error output)"))
	case msg == "":
		msg = p.cmd.ProcessState.String()
	}
	return fmt.Errorf("lock: %s exited without answering %q: %s", l.argv[0], command, msg)
}

// stop ends p's process group — sig first, then SIGKILL if anything of it
// is left after stopTimeout — and forgets p. A group already gone is not
// signalled: its number may belong to another process by now.
func (l *execLock) stop(p *proc, sig syscall.Signal) {
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
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot look closer: it is there
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
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) >= 3 && f[2] == want && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
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

func (l *execLock) Acquire(ctx context.Context) (Grant, error) {
	line, err := l.ask(ctx, "acquire")
	if err != nil {
		return Grant{}, err
	}
	verb, fields, msg := parseAnswer(line)
	switch verb {
	case "granted":
	case "error":
		return Grant{}, answerErr(msg)
	default:
		return Grant{}, l.strayAnswer("acquire", line)
	}
	g := Grant{Key: fields["key"]}
	if g.Token, err = parseInt(fields["token"]); err != nil {
		return Grant{}, fmt.Errorf("lock: %s: token in %q: %w", l.argv[0], line, err)
	}
	lease, err := parseInt(fields["lease"])
	if err != nil {
		return Grant{}, fmt.Errorf("lock: %s: lease in %q: %w", l.argv[0], line, err)
	}
	g.Lease = clientv3.LeaseID(lease)
	if g.Key != "" && (g.Token == 0 || g.Lease == 0) {
		// Read from the key the lock holds, as it stands now.
		resp, err := l.cli.Get(ctx, g.Key)
		if err != nil {
			return Grant{}, fmt.Errorf("lock: reading the granted key %s: %w", g.Key, err)
		}
		if len(resp.Kvs) == 0 {
			return Grant{}, fmt.Errorf("%w: granted, but its key %s is gone", ErrSessionExpired, g.Key)
		}
		if g.Lease != 0 && clientv3.LeaseID(resp.Kvs[0].Lease) != g.Lease {
			// The key the answer named now rests on another lease: the
			// grant's lease ended and the next holder took the key. Its
			// token is not this grant's.
			return Grant{}, fmt.Errorf("%w: granted on lease %x, but its key %s now rests on lease %x (the next holder's)",
				ErrSessionExpired, int64(g.Lease), g.Key, resp.Kvs[0].Lease)
		}
		g.Token = cmp.Or(g.Token, resp.Kvs[0].CreateRevision)
		g.Lease = cmp.Or(g.Lease, clientv3.LeaseID(resp.Kvs[0].Lease))
	}
	if g.Token == 0 && g.Key == "" {
		return Grant{}, fmt.Errorf("lock: %s granted with neither key nor token: %q", l.argv[0], line)
	}
	l.mu.Lock()
	l.grant, l.lease = g, g.Lease
	l.mu.Unlock()
	return g, nil
}

// Release releases the latest grant; an older one is refused as not held
// and never reaches the process, whose release means "the lock I hold now".
func (l *execLock) Release(ctx context.Context, g Grant) error {
	l.mu.Lock()
	latest := l.grant
	l.mu.Unlock()
	if g.Token != latest.Token || g.Key != latest.Key || latest == (Grant{}) {
		return ErrNotHeld
	}
	line, err := l.ask(ctx, "release")
	if err != nil {
		return err
	}
	verb, _, msg := parseAnswer(line)
	switch verb {
	case "released":
		l.mu.Lock()
		l.grant = Grant{}
		l.mu.Unlock()
		return nil
	case "error":
		return answerErr(msg)
	}
	return l.strayAnswer("release", line)
}

// strayAnswer is stray for the running process's answer to command.
func (l *execLock) strayAnswer(command, line string) error {
	l.mu.Lock()
	p := l.p
	l.mu.Unlock()
	if p == nil {
		return fmt.Errorf("lock: %s answered %s with %q, which is no answer of the protocol", l.argv[0], command, truncate(line))
	}
	return l.stray(p, command, line, "when asked to "+command)
}

// Lease is the lease of the latest grant, or zero before the first.
func (l *execLock) Lease() clientv3.LeaseID {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lease
}

// Close stops the process: SIGTERM (it gives up what it holds or waits
// for, and exits), then SIGKILL for what is left of its group after
// stopTimeout.
func (l *execLock) Close() error { return l.end(syscall.SIGTERM) }

// Stop freezes the process group (SIGSTOP).
func (l *execLock) Stop() error { return l.signal(syscall.SIGSTOP) }

// Kill ends the process group with SIGKILL and waits until it is gone.
func (l *execLock) Kill() error { return l.end(syscall.SIGKILL) }

// end stops the running process, if any, starting with sig (see stop).
func (l *execLock) end(sig syscall.Signal) error {
	l.mu.Lock()
	p := l.p
	l.mu.Unlock()
	if p != nil {
		l.stop(p, sig)
	}
	return nil
}

// Continue undoes Stop (SIGCONT).
func (l *execLock) Continue() error { return l.signal(syscall.SIGCONT) }

func (l *execLock) signal(sig syscall.Signal) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p == nil || groupGone(-l.p.cmd.Process.Pid, l.p.exited, 0) {
		return nil
	}
	return syscall.Kill(-l.p.cmd.Process.Pid, sig)
}
