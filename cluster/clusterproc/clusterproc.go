package clusterproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/internal/cputime"
)

// envVar, set in a child's environment, holds the cluster's configuration.
const envVar = "LOCKLAB_CLUSTER_PROCESS"

// Config is the child's cluster.
type Config struct {
	Members int
	Fsync   bool
	// Verbose passes etcd's logs through to the parent's standard error.
	Verbose bool
}

// Proc is a running child cluster.
type Proc struct {
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	out       *bufio.Reader
	stderr    *bytes.Buffer
	endpoints []string
	mu        sync.Mutex // one request at a time
	closeOnce sync.Once
	closeErr  error
}

// hello is the child's first line; reply its answer to "cpu".
type hello struct {
	Endpoints []string `json:"endpoints"`
	Error     string   `json:"error,omitempty"`
}

type reply struct {
	CPU int64 `json:"cpu_ns"`
}

// Start starts a child process serving an embedded cluster and waits until
// it serves (or ctx ends). Close stops it.
func Start(ctx context.Context, cfg Config) (*Proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("clusterproc: %w", err)
	}
	conf, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envVar+"="+string(conf))
	p := &Proc{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = p.stderr
	if cfg.Verbose {
		cmd.Stderr = os.Stderr
	}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("clusterproc: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("clusterproc: %w", err)
	}
	p.out = bufio.NewReader(stdout)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("clusterproc: %w", err)
	}
	started := make(chan error, 1)
	go func() {
		var h hello
		line, err := p.out.ReadBytes('\n')
		if err == nil {
			err = json.Unmarshal(line, &h)
		}
		if err == nil && h.Error != "" {
			err = errors.New(h.Error)
		}
		p.endpoints = h.Endpoints
		started <- err
	}()
	select {
	case err = <-started:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		p.Close()
		if msg := strings.TrimSpace(p.stderr.String()); msg != "" && !cfg.Verbose {
			err = fmt.Errorf("%w (%s)", err, lastLine(msg))
		}
		return nil, fmt.Errorf("clusterproc: starting the cluster process: %w", err)
	}
	return p, nil
}

// Endpoints are the cluster's client URLs.
func (p *Proc) Endpoints() []string { return p.endpoints }

// Pid is the child's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// CPU is the CPU time (user and system) the child has used so far.
func (p *Proc) CPU() (time.Duration, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := io.WriteString(p.stdin, "cpu\n"); err != nil {
		return 0, fmt.Errorf("clusterproc: %w", err)
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		return 0, fmt.Errorf("clusterproc: %w", err)
	}
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		return 0, fmt.Errorf("clusterproc: %q: %w", line, err)
	}
	if r.CPU < 0 {
		return 0, cputime.ErrUnsupported
	}
	return time.Duration(r.CPU), nil
}

// Close stops the child: its standard input closes, it closes the cluster
// and exits; after 10 s it is killed.
func (p *Proc) Close() error {
	p.closeOnce.Do(func() {
		p.stdin.Close()
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case p.closeErr = <-done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			p.closeErr = fmt.Errorf("clusterproc: the cluster process did not stop within 10 s: killed (%v)", <-done)
		}
	})
	return p.closeErr
}

// Serve turns this process into a child cluster server if it was started
// as one by Start: it then never returns. Otherwise it returns at once.
func Serve() {
	conf, ok := os.LookupEnv(envVar)
	if !ok {
		return
	}
	// Ctrl-C reaches the whole process group: the parent stops the child
	// by closing its standard input, after which the child removes its
	// members' data; dying at the signal would leave that data behind.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	os.Exit(serve(conf, os.Stdin, os.Stdout))
}

func serve(conf string, in io.Reader, out io.Writer) int {
	enc := json.NewEncoder(out)
	var cfg Config
	if err := json.Unmarshal([]byte(conf), &cfg); err != nil {
		enc.Encode(hello{Error: fmt.Sprintf("bad %s: %v", envVar, err)})
		return 2
	}
	var lg *zap.Logger
	if cfg.Verbose {
		lg, _ = zap.NewDevelopment()
	}
	// The cluster lives as long as the parent keeps standard input open.
	c, err := cluster.Start(context.Background(), cluster.Config{Members: cfg.Members, Fsync: cfg.Fsync, Logger: lg})
	if err != nil {
		enc.Encode(hello{Error: err.Error()})
		return 1
	}
	defer c.Close()
	if err := enc.Encode(hello{Endpoints: c.Endpoints()}); err != nil {
		return 1
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		switch sc.Text() {
		case "cpu":
			cpu, err := cputime.Self()
			if err != nil {
				cpu = -1
			}
			if enc.Encode(reply{CPU: int64(cpu)}) != nil {
				return 1
			}
		}
	}
	return 0
}

func lastLine(s string) string {
	return s[strings.LastIndexByte(s, '\n')+1:]
}
