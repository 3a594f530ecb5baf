package redisd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/internal/clockshim"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/internal/serverproc"
	"github.com/locklab/locklab/internal/tailbuf"
)

// Binary is the name of the server program looked up on PATH.
const Binary = "redis-server"

// ErrNotInstalled says that redis-server is not on PATH, and how to get it.
var ErrNotInstalled = errors.New("redis-server is not installed (Debian: apt-get install redis-server)")

// Find returns the path of redis-server, or ErrNotInstalled.
func Find() (string, error) {
	p, err := exec.LookPath(Binary)
	if err != nil {
		return "", ErrNotInstalled
	}
	return p, nil
}

// startAttempts bounds how often a server is started again on a fresh port
// when another process took the port it was given between the moment the
// port was found free and the moment the server bound it.
const startAttempts = 5

// server is one redis-server process on a loopback port of its own, with
// its data directory.
type server struct {
	name string
	bin  string
	dir  string
	args []string // what it is started with, its port excepted
	out  *tailbuf.Buffer
	log  io.Writer // also gets the output, if not nil
	// clock, if set, is the server's wall clock, moved by the clock shim
	// (shim) preloaded into it.
	clock *clockshim.Clock
	shim  string

	mu    sync.Mutex
	addr  string           // host:port while it runs, "" once killed
	proc  *serverproc.Proc // nil for a server of the user's own, or one killed
	admin *redis.Client    // direct, not through any proxy: the lab's own view
	// opts, for a server of the user's own, are its clients' options
	// (password, database, TLS); nil for one the lab started.
	opts *redis.Options
}

// clientOptions are the options of a client that reaches the server at
// addr.
func (s *server) clientOptions(addr string) *redis.Options {
	if s.opts == nil {
		return &redis.Options{Addr: addr}
	}
	o := *s.opts
	o.Addr = addr
	return &o
}

// start runs the server on a free loopback port and waits until it answers
// PING. A port taken by someone else in the meantime is met by starting it
// again on another.
func (s *server) start(ctx context.Context) error {
	var err error
	for range startAttempts {
		var port int
		if port, err = freePort(); err != nil {
			return err
		}
		if err = s.run(ctx, port); err == nil || !strings.Contains(s.out.String(), "Address already in use") {
			return err
		}
	}
	return err
}

// run starts the process on port and waits for it to serve.
func (s *server) run(ctx context.Context, port int) error {
	s.out.Reset()
	args := append([]string{"--port", strconv.Itoa(port)}, s.args...)
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.dir
	if s.clock != nil {
		cmd.Env = append(os.Environ(), s.clock.Env(s.shim)...)
	}
	proc, err := serverproc.Start(cmd, s.out, s.log)
	if err != nil {
		return fmt.Errorf("redisd: starting %s: %w", s.name, err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	admin := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second, PoolSize: 2})
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err = poll.Until(ctx, s.name+" to answer PING", 10*time.Millisecond, func(ctx context.Context) (bool, error) {
		select {
		case <-proc.Exited():
			return false, errExited
		default:
		}
		return admin.Ping(ctx).Err() == nil, nil
	})
	if err != nil {
		admin.Close()
		proc.Kill()
		return fmt.Errorf("redisd: %s did not serve on %s: %w; its output: %s", s.name, addr, err, s.out.Last(3))
	}
	s.mu.Lock()
	s.addr, s.proc, s.admin = addr, proc, admin
	s.mu.Unlock()
	return nil
}

var errExited = errors.New("the process exited")

// Addr is where the server listens, or "" while it is down.
func (s *server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// upstream is Addr for a proxy: an error while the server is down.
func (s *server) upstream() (string, error) {
	if a := s.Addr(); a != "" {
		return a, nil
	}
	return "", fmt.Errorf("redisd: %s is down", s.name)
}

// Admin is the lab's own client of the server, connected directly; nil
// while it is down.
func (s *server) Admin() *redis.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.admin
}

// died says whether the process exited though the lab did not kill it,
// and, if so, the last lines it printed.
func (s *server) died() (bool, string) {
	s.mu.Lock()
	proc := s.proc // nil: a server of the user's own, or one the lab killed
	s.mu.Unlock()
	return proc.Died()
}

// kill ends the process at once (SIGKILL: nothing is saved, as in a crash)
// and waits for it to be gone.
func (s *server) kill() {
	s.mu.Lock()
	proc, admin := s.proc, s.admin
	s.addr, s.proc, s.admin = "", nil, nil
	s.mu.Unlock()
	if admin != nil {
		admin.Close() // of a server of the user's own, only the lab's connection ends
	}
	proc.Kill()
}

// freePort asks the kernel for a free loopback port. The port is free
// when asked; start copes with losing it before the server binds it.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redisd: finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// baseArgs configure a server for the lab: loopback only, nothing saved to
// disk (a killed server comes back empty, as a crashed cache does),
// replication fast to begin, logs to standard output.
func baseArgs() []string {
	return []string{"--bind", "127.0.0.1", "--protected-mode", "no", "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--logfile", "", "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
		"--repl-diskless-load", "on-empty-db"}
}

// newServer prepares a server named name with its own directory under root.
func newServer(bin, root, name string, extra ...string) (*server, error) {
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("redisd: %w", err)
	}
	return &server{name: name, bin: bin, dir: dir, args: append(baseArgs(), extra...), out: &tailbuf.Buffer{}}, nil
}
