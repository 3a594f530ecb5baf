package zkd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/internal/clockshim"
	"github.com/locklab/locklab/internal/serverproc"
	"github.com/locklab/locklab/internal/tailbuf"
)

// Jar is the ZooKeeper server's jar as Debian's zookeeperd installs it;
// its manifest names the jars it needs beside it.
const Jar = "/usr/share/java/zookeeper.jar"

// SimpleLogger is SLF4J's simple binding (Debian's libslf4j-java, which
// ZooKeeper's package depends on): the servers log through it, where it is.
const SimpleLogger = "/usr/share/java/slf4j-simple.jar"

// ErrNotInstalled says that ZooKeeper is not installed, and how to get it.
var ErrNotInstalled = errors.New("ZooKeeper is not installed (Debian: apt-get install zookeeperd)")

// Find returns the java program and the server's jar, or ErrNotInstalled.
func Find() (java, jar string, err error) {
	if _, err := os.Stat(Jar); err != nil {
		return "", "", ErrNotInstalled
	}
	java, err = exec.LookPath("java")
	if err != nil {
		return "", "", fmt.Errorf("%w: no java on PATH", ErrNotInstalled)
	}
	return java, Jar, nil
}

// TickTime is the servers' tick: sessions last between two ticks and the
// maximum, so that the lab's leases of a second are sessions of a second.
const TickTime = 100 * time.Millisecond

// server is one ZooKeeper server process with its data directory and its
// three ports: clients', the quorum's and leader election's.
type server struct {
	id                       int // its myid, from 1
	name, dir                string
	java, jar                string
	client, quorum, election int
	out                      *tailbuf.Buffer
	log                      io.Writer
	peersOf                  func(id int) string // the server.N lines of id's config
	// clock, if set, is the server's wall clock, moved by the clock shim
	// (shim) preloaded into its JVM.
	clock *clockshim.Clock
	shim  string
	mu    sync.Mutex
	proc  *serverproc.Proc // nil: never started, or killed by the lab
}

// addr is where the server takes clients.
func (s *server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.client)) }

// config is the server's zoo.cfg.
func (s *server) config() string {
	tick := int(TickTime / time.Millisecond)
	return fmt.Sprintf(`tickTime=%d
initLimit=100
syncLimit=20
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
minSessionTimeout=%d
maxSessionTimeout=120000
admin.enableServer=false
4lw.commands.whitelist=*
standaloneEnabled=true
cnxTimeout=500
%s`, tick, s.dir, s.client, 2*tick, s.peersOf(s.id))
}

// run starts the process on its config; it serves once the ensemble has
// a leader (see Ensemble.waitServing).
func (s *server) run() error {
	cfg := filepath.Join(s.dir, "zoo.cfg")
	if err := os.WriteFile(cfg, []byte(s.config()), 0o644); err != nil {
		return fmt.Errorf("zkd: %w", err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "myid"), []byte(strconv.Itoa(s.id)+"\n"), 0o644); err != nil {
		return fmt.Errorf("zkd: %w", err)
	}
	s.out.Reset()
	classpath, logging := s.jar, []string(nil)
	if _, err := os.Stat(SimpleLogger); err == nil {
		// Without a binding ZooKeeper logs nothing: a server that exits
		// would say nothing of why. Its warnings go to its output, whose
		// last lines explain a failure.
		classpath += string(os.PathListSeparator) + SimpleLogger
		logging = []string{"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.showDateTime=true",
			"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS"}
	}
	// -XX:-UsePerfData: a JVM keeps a file of its own under
	// /tmp/hsperfdata_<user>, removed only when it exits on its own; a
	// server the lab kills would leave it behind.
	args := append([]string{"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
		"-Dzookeeper.admin.enableServer=false"},
		logging...)
	args = append(args, "-cp", classpath, "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg)
	cmd := exec.Command(s.java, args...)
	cmd.Dir = s.dir
	if s.clock != nil {
		cmd.Env = append(os.Environ(), s.clock.Env(s.shim)...)
	}
	proc, err := serverproc.Start(cmd, s.out, s.log)
	if err != nil {
		return fmt.Errorf("zkd: starting %s: %w", s.name, err)
	}
	s.mu.Lock()
	s.proc = proc
	s.mu.Unlock()
	return nil
}

// running reports whether the process runs.
func (s *server) running() bool {
	s.mu.Lock()
	proc := s.proc
	s.mu.Unlock()
	if proc == nil {
		return false
	}
	select {
	case <-proc.Exited():
		return false
	default:
		return true
	}
}

// died says whether the process exited though the lab did not kill it,
// and, if so, the last lines it printed.
func (s *server) died() (bool, string) {
	s.mu.Lock()
	proc := s.proc
	s.mu.Unlock()
	return proc.Died()
}

// kill ends the process at once (SIGKILL, as a crash of its machine) and
// waits for it to be gone; its data directory stays.
func (s *server) kill() {
	s.mu.Lock()
	proc := s.proc
	s.proc = nil
	s.mu.Unlock()
	proc.Kill()
}

// flw asks the server a four-letter word and returns its answer.
func (s *server) flw(ctx context.Context, word string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", s.addr())
	if err != nil {
		return "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl) //nolint:errcheck // a deadline not set only waits longer
	}
	if _, err := io.WriteString(c, word); err != nil {
		return "", err
	}
	b, err := io.ReadAll(bufio.NewReader(c))
	return string(b), err
}

// mode is the server's role ("leader", "follower", "standalone"), or ""
// when it does not serve.
func (s *server) mode(ctx context.Context) string {
	out, err := s.flw(ctx, "srvr")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(out, "\n") {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(m)
		}
	}
	return ""
}

// freePorts finds n free loopback ports, all held until the last is found
// so that none is given twice. They are drawn at random below the
// kernel's ephemeral range (see belowEphemeral), where possible: a JVM
// binds its ports a second or more after they are found, and a port of
// that range freed meanwhile is the kernel's to hand out again — to the
// lab's own proxies listening on port 0, or to any outgoing connection —
// which a server of another ensemble starting beside it met, and exited.
func freePorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	lo, hi := belowEphemeral()
	var out []int
	for tries := 0; len(out) < n; tries++ {
		addr := "127.0.0.1:0"
		if hi > lo && tries < 50*n {
			addr = fmt.Sprintf("127.0.0.1:%d", lo+rand.IntN(hi-lo))
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			if addr != "127.0.0.1:0" {
				continue // taken: draw another
			}
			return nil, fmt.Errorf("zkd: finding a free port: %w", err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// belowEphemeral is the range of ports [lo, hi) the lab draws a server's
// ports from: from 10000 up to the first of the kernel's ephemeral ports
// (Linux's ip_local_port_range). An empty range where the kernel does not
// say: then the kernel picks.
func belowEphemeral() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0, 0
	}
	first, err := strconv.Atoi(f[0])
	if err != nil || first <= 12000 {
		return 0, 0
	}
	return 10000, first
}
