package pgd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/internal/piddir"
	"github.com/locklab/locklab/internal/serverproc"
	"github.com/locklab/locklab/internal/tailbuf"
)

// ErrNoPooler says that PgBouncer is not installed, and how to get it.
var ErrNoPooler = errors.New("pgbouncer is not installed (apt-get install pgbouncer)")

// FindPooler returns the path of PgBouncer's program: on PATH, or where
// Debian's package puts it (/usr/sbin, not on every user's PATH).
func FindPooler() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	if isFile("/usr/sbin/pgbouncer") {
		return "/usr/sbin/pgbouncer", nil
	}
	return "", ErrNoPooler
}

// Pooler is a PgBouncer in transaction mode in front of a Server, as
// teams run one to share a few server connections between many clients:
// each transaction (each statement, outside one) runs on whichever server
// connection is free, and goes back to the pool when it ends. A pool of
// one server connection, so that every client's transactions share it,
// as they do under a light load with any pool size (PgBouncer reuses the
// connection it used last).
type Pooler struct {
	root string
	out  *tailbuf.Buffer
	proc *serverproc.Proc
	addr string

	mu      sync.Mutex
	proxies []*netproxy.Proxy
	closed  bool
}

// StartPooler starts PgBouncer in front of srv (following it through a
// failover) on a free loopback port, and returns once it takes
// connections.
func StartPooler(ctx context.Context, srv *Server, opts Options) (_ *Pooler, err error) {
	bin, err := FindPooler()
	if err != nil {
		return nil, err
	}
	upstream, err := srv.upstream()
	if err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(upstream)
	root, err := piddir.Make("", "pgbouncer")
	if err != nil {
		return nil, fmt.Errorf("pgd: %w", err)
	}
	p := &Pooler{root: root, out: &tailbuf.Buffer{}}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	for range startAttempts {
		var listen int
		if listen, err = freePort(); err != nil {
			return nil, err
		}
		if err = p.run(ctx, bin, srv.as, opts, host, port, listen); err == nil {
			return p, nil
		}
		if !strings.Contains(p.out.String(), "in use") {
			return nil, err
		}
	}
	return nil, err
}

// run writes the pooler's settings and starts it listening on listen.
func (p *Pooler) run(ctx context.Context, bin string, as *owner, opts Options, host, port string, listen int) error {
	ini := filepath.Join(p.root, "pgbouncer.ini")
	users := filepath.Join(p.root, "userlist.txt")
	conf := strings.Join([]string{
		"[databases]",
		fmt.Sprintf("%s = host=%s port=%s dbname=%s", Database, host, port, Database),
		"[pgbouncer]",
		"listen_addr = 127.0.0.1",
		"listen_port = " + strconv.Itoa(listen),
		"unix_socket_dir =",
		"auth_type = trust",
		"auth_file = " + users,
		"pool_mode = transaction",
		"default_pool_size = 1",
		"max_client_conn = 300",
		// The lab's idle timeouts are the server's business, not the
		// pooler's: it passes none on, and refuses a client that sends
		// what it does not know unless told to ignore it.
		"ignore_startup_parameters = idle_session_timeout,idle_in_transaction_session_timeout,extra_float_digits",
		"logfile =",
		"pidfile =",
		"log_connections = 0",
		"log_disconnections = 0",
		"",
	}, "\n")
	for _, f := range []struct{ path, text string }{{ini, conf}, {users, fmt.Sprintf("%q \"\"\n", User)}} {
		if err := os.WriteFile(f.path, []byte(f.text), 0o600); err != nil {
			return fmt.Errorf("pgd: %w", err)
		}
	}
	if err := as.own(p.root); err != nil {
		return fmt.Errorf("pgd: handing %s to the pooler's user: %w", p.root, err)
	}
	p.out.Reset()
	cmd := exec.Command(bin, ini)
	cmd.Dir = p.root
	as.apply(cmd)
	proc, err := serverproc.Start(cmd, p.out, opts.Log)
	if err != nil {
		return fmt.Errorf("pgd: starting pgbouncer: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(listen))
	err = takesConnections(ctx, proc, addr)
	if err != nil {
		proc.Kill()
		return fmt.Errorf("pgd: pgbouncer did not take connections on %s: %w; its output: %s", addr, err, p.out.Last(3))
	}
	p.mu.Lock()
	p.proc, p.addr = proc, addr
	p.mu.Unlock()
	return nil
}

// Link is a new proxy to the pooler for one client, as Server.Link is to
// the server; the Pooler closes it with itself.
func (p *Pooler) Link() (*netproxy.Proxy, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("pgd: the pooler is closed")
	}
	addr := p.addr
	x, err := netproxy.New(func() (string, error) { return addr, nil })
	if err != nil {
		return nil, err
	}
	p.proxies = append(p.proxies, x)
	return x, nil
}

// Died says whether the pooler exited though the lab did not stop it,
// and, if so, the last lines it printed.
func (p *Pooler) Died() (bool, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.proc.Died()
}

// Close stops the pooler, closes its links and removes its directory.
func (p *Pooler) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	proxies, proc := p.proxies, p.proc
	p.proc = nil
	p.mu.Unlock()
	var errs []error
	for _, x := range proxies {
		errs = append(errs, x.Close())
	}
	proc.Stop(5 * time.Second)
	errs = append(errs, os.RemoveAll(p.root))
	return errors.Join(errs...)
}
