package pgd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/internal/piddir"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/internal/serverproc"
	"github.com/locklab/locklab/internal/tailbuf"
)

// ErrNotInstalled says that PostgreSQL is not installed, and how to get it.
var ErrNotInstalled = errors.New("PostgreSQL is not installed (Debian: apt-get install postgresql)")

// User is the role the lab's clients connect as, and Database the database
// they use; the server trusts loopback connections.
const (
	User     = "locklab"
	Database = "postgres"
)

// Find returns the directory that holds PostgreSQL's programs (initdb,
// postgres, pg_basebackup): postgres's own, links on PATH followed, or
// Debian's /usr/lib/postgresql/VERSION/bin (the newest), which is not on
// PATH.
func Find() (string, error) {
	if p, err := exec.LookPath("postgres"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && isFile(filepath.Join(filepath.Dir(real), "initdb")) {
			return filepath.Dir(real), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if isFile(filepath.Join(d, "postgres")) && isFile(filepath.Join(d, "initdb")) {
			return d, nil
		}
	}
	return "", ErrNotInstalled
}

// version is the major version a Debian bin directory is for.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Options configure a Server.
type Options struct {
	// Log, if not nil, receives the server's output (locklab's --verbose);
	// otherwise only its last lines are kept, for errors.
	Log io.Writer
}

// Server is one PostgreSQL server the lab started. Its methods are safe
// for concurrent use.
type Server struct {
	root, data, bin string
	as              *owner // who the server runs as (nil: the lab's own user)
	out             *tailbuf.Buffer
	log             io.Writer

	mu      sync.Mutex
	addr    string // host:port while it runs, "" while it is down
	port    int
	proc    *serverproc.Proc // nil while it is down
	admin   *pgxpool.Pool
	proxies []*netproxy.Proxy
	closed  bool
	// repl is a replica's link to its primary (nil on a primary); next is
	// the replica a primary failed over to (see FailOver).
	repl *netproxy.Proxy
	next *Server
}

// Start initialises a data directory and starts a server on it, on a free
// loopback port, and returns once it takes connections.
func Start(ctx context.Context, opts Options) (_ *Server, err error) {
	bin, err := Find()
	if err != nil {
		return nil, err
	}
	root, err := piddir.Make("", "postgres")
	if err != nil {
		return nil, fmt.Errorf("pgd: %w", err)
	}
	s := &Server{root: root, data: filepath.Join(root, "data"), bin: bin, out: &tailbuf.Buffer{}, log: opts.Log}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.as, err = serverOwner(); err != nil {
		return nil, err
	}
	if err := s.as.own(root); err != nil {
		return nil, fmt.Errorf("pgd: handing %s to the server's user: %w", root, err)
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", s.data, "-U", User, "-A", "trust",
		"--no-sync", "-E", "UTF8", "--locale=C")
	s.as.apply(initdb)
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgd: initdb: %w: %s", err, lastLines(string(out), 3))
	}
	return s, s.start(ctx)
}

// startAttempts bounds how often the server is started again on a fresh
// port when another process took the one it was given.
const startAttempts = 5

// start runs the server on a free port (the one it had, after Kill) and
// waits until it takes connections.
func (s *Server) start(ctx context.Context) error {
	var err error
	for range startAttempts {
		port := s.port
		if port == 0 {
			if port, err = freePort(); err != nil {
				return err
			}
		}
		if err = s.run(ctx, port); err == nil {
			return nil
		}
		if !strings.Contains(s.out.String(), "could not bind") && !strings.Contains(s.out.String(), "already in use") {
			return err
		}
		s.port = 0
	}
	return err
}

// settings are the server's: loopback only, no disk safety against a
// machine's crash (which the lab never makes), a commit's WAL written
// before it is acknowledged (a killed server keeps what it acknowledged),
// quiet, room for every client a run makes.
func (s *Server) settings(port int) []string {
	var args []string
	for _, kv := range []string{
		"listen_addresses=127.0.0.1", "port=" + strconv.Itoa(port), "unix_socket_directories=" + s.root,
		"fsync=off", "synchronous_commit=on", "full_page_writes=off", "max_connections=300",
		"shared_buffers=16MB", "log_min_messages=warning", "log_min_error_statement=panic", "logging_collector=off",
	} {
		args = append(args, "-c", kv)
	}
	return args
}

// run starts the process on port and waits for it to take connections.
func (s *Server) run(ctx context.Context, port int) error {
	s.out.Reset()
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), append([]string{"-D", s.data}, s.settings(port)...)...)
	cmd.Dir = s.root
	s.as.apply(cmd)
	proc, err := serverproc.Start(cmd, s.out, s.log)
	if err != nil {
		return fmt.Errorf("pgd: starting postgres: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	err = takesConnections(ctx, proc, addr)
	var admin *pgxpool.Pool
	if err == nil {
		admin, err = newAdmin(ctx, addr)
	}
	if err != nil {
		proc.Kill()
		return fmt.Errorf("pgd: postgres did not take connections on %s: %w; its output: %s", addr, err, s.out.Last(3))
	}
	s.mu.Lock()
	s.addr, s.port, s.proc, s.admin = addr, port, proc, admin
	s.mu.Unlock()
	return nil
}

// newAdmin is the lab's own pool of connections to the server at addr.
func newAdmin(ctx context.Context, addr string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn(addr))
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 4
	return pgxpool.NewWithConfig(ctx, cfg)
}

var errExited = errors.New("the process exited")

// takesConnections waits until the server (or pooler) proc started takes
// connections at addr, or has exited.
func takesConnections(ctx context.Context, proc *serverproc.Proc, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return poll.Until(ctx, "a connection to "+addr, 20*time.Millisecond, func(ctx context.Context) (bool, error) {
		if dead, _ := proc.Died(); dead {
			return false, errExited
		}
		c, err := pgx.Connect(ctx, dsn(addr))
		if err != nil {
			return false, nil
		}
		return true, c.Close(ctx)
	})
}

// dsn is the connection string of the lab's role on the server at addr.
func dsn(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf("host=%s port=%s user=%s dbname=%s sslmode=disable connect_timeout=5", host, port, User, Database)
}

// ConnString is the connection string of a client that reaches the server
// at addr (a proxy's, for a client of the lab's).
func ConnString(addr string) string { return dsn(addr) }

// Addr is where the server listens, or "" while it is down.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

func (s *Server) upstream() (string, error) {
	if n := s.successor(); n != nil {
		return n.upstream()
	}
	if a := s.Addr(); a != "" {
		return a, nil
	}
	return "", errors.New("pgd: postgres is down")
}

// Link is a new proxy to the server for one client: cut, delayed or
// severed apart from every other client's link. The Server closes it with
// itself.
func (s *Server) Link() (*netproxy.Proxy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("pgd: the server is closed")
	}
	p, err := netproxy.New(s.upstream)
	if err != nil {
		return nil, err
	}
	s.proxies = append(s.proxies, p)
	return p, nil
}

// Admin is the lab's own pool of connections to the server, direct (never
// faulted): what the server holds, as the lab reads it. nil while the
// server is down.
func (s *Server) Admin() *pgxpool.Pool {
	if n := s.successor(); n != nil {
		return n.Admin()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.admin
}

// Died says whether the server exited though the lab did not stop it,
// and, if so, the last lines it printed.
func (s *Server) Died() (bool, string) {
	if n := s.successor(); n != nil {
		return n.Died()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc.Died()
}

// Kill ends the server at once (SIGKILL of the postmaster: its sessions go
// with it, and with them every lock they held) and waits for it to be gone.
func (s *Server) Kill() {
	s.mu.Lock()
	proc, admin := s.proc, s.admin
	s.addr, s.proc, s.admin = "", nil, nil
	s.mu.Unlock()
	if admin != nil {
		admin.Close()
	}
	proc.Kill()
}

// Restart starts a killed server again on its data directory and port.
func (s *Server) Restart(ctx context.Context) error {
	if s.Addr() != "" {
		return nil
	}
	return s.start(ctx)
}

// Terminate ends the session of backend pid, as pg_terminate_backend does
// (the server ends a session: its locks go with it), and reports whether
// there was one.
func (s *Server) Terminate(ctx context.Context, pid int64) (bool, error) {
	admin := s.Admin()
	if admin == nil {
		return false, errors.New("pgd: postgres is down")
	}
	var ok bool
	err := admin.QueryRow(ctx, "SELECT pg_terminate_backend($1::int)", pid).Scan(&ok)
	return ok, err
}

// Close stops the server (a fast shutdown, then SIGKILL if it lingers),
// closes every link and removes its directory.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	proc, admin, proxies := s.proc, s.admin, s.proxies
	if s.repl != nil {
		proxies = append(proxies, s.repl)
	}
	s.addr, s.proc, s.admin = "", nil, nil
	s.mu.Unlock()
	if admin != nil {
		admin.Close()
	}
	var errs []error
	for _, p := range proxies {
		errs = append(errs, p.Close())
	}
	proc.Stop(5 * time.Second)
	errs = append(errs, os.RemoveAll(s.root))
	return errors.Join(errs...)
}

// freePort asks the kernel for a free loopback port; start copes with
// losing it before the server binds it.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgd: finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], " / ")
}
