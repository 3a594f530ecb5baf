package zkd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/internal/clockshim"
	"github.com/locklab/locklab/internal/piddir"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/internal/tailbuf"
)

// Options configure an ensemble.
type Options struct {
	// Log gets the servers' output (nil: kept only to explain a failure).
	Log io.Writer
	// Clocks gives every server a wall clock the lab can move (JumpClock):
	// the clock shim (see clockshim) preloaded into its JVM.
	Clocks bool
}

// Ensemble is ZooKeeper servers started for the lab, z1…zN.
type Ensemble struct {
	root    string
	servers []*server
	// peers are the links from server i to server j (its quorum and its
	// election port), by [i, j].
	peers map[[2]int][]*netproxy.Proxy
	admin *zk.Conn

	mu      sync.Mutex
	proxies []*netproxy.Proxy // clients' links
	closed  bool
}

// startWait bounds how long an ensemble (or a server started again) may
// take to serve: a JVM starts in about a second, more on a busy machine.
const startWait = 60 * time.Second

// Start starts an ensemble of n servers and waits until each serves (a
// leader elected, every other following it).
func Start(ctx context.Context, n int, opts Options) (_ *Ensemble, err error) {
	if n < 1 {
		return nil, fmt.Errorf("zkd: %d servers: at least one is needed", n)
	}
	java, jar, err := Find()
	if err != nil {
		return nil, err
	}
	root, err := piddir.Make("", "zookeeper")
	if err != nil {
		return nil, fmt.Errorf("zkd: %w", err)
	}
	e := &Ensemble{root: root, peers: map[[2]int][]*netproxy.Proxy{}}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	ports, err := freePorts(3 * n)
	if err != nil {
		return nil, err
	}
	shim := ""
	if opts.Clocks {
		if shim, err = clockshim.Build(ctx); err != nil {
			return nil, err
		}
	}
	for i := range n {
		s := &server{id: i + 1, name: fmt.Sprintf("z%d", i+1), java: java, jar: jar, out: &tailbuf.Buffer{}, log: opts.Log,
			client: ports[3*i], quorum: ports[3*i+1], election: ports[3*i+2], peersOf: e.peerLines}
		s.dir = filepath.Join(root, s.name)
		if err := os.MkdirAll(s.dir, 0o755); err != nil {
			return nil, fmt.Errorf("zkd: %w", err)
		}
		if shim != "" {
			if s.clock, err = clockshim.New(s.dir); err != nil {
				return nil, err
			}
			s.shim = shim
		}
		e.servers = append(e.servers, s)
	}
	if err := e.linkPeers(); err != nil {
		return nil, err
	}
	for _, s := range e.servers {
		if err := s.run(); err != nil {
			return nil, err
		}
	}
	if err := e.waitServing(ctx, e.servers...); err != nil {
		return nil, err
	}
	e.admin, _, err = zk.Connect(e.Addrs(), 10*time.Second, zk.WithLogger(Silent{}))
	if err != nil {
		return nil, fmt.Errorf("zkd: the lab's own connection: %w", err)
	}
	return e, nil
}

// quorumRedial is how long a follower's connection to its leader's quorum
// port waits for the leader to listen (see netproxy.Proxy.SetRedial).
const quorumRedial = 2 * time.Second

// linkPeers puts a proxy between every two servers, one for each port a
// server reaches another on.
func (e *Ensemble) linkPeers() error {
	for i := range e.servers {
		for j, to := range e.servers {
			if i == j {
				continue
			}
			for _, port := range []int{to.quorum, to.election} {
				addr := "127.0.0.1:" + strconv.Itoa(port)
				p, err := netproxy.New(func() (string, error) { return addr, nil })
				if err != nil {
					return err
				}
				if port == to.quorum {
					// A leader listens for its followers only once
					// elected; one that connects a moment earlier waits,
					// as it would retry on a refused connect.
					p.SetRedial(quorumRedial)
				}
				e.peers[[2]int{i, j}] = append(e.peers[[2]int{i, j}], p)
			}
		}
	}
	return nil
}

// peerLines are the server.N lines of server id's config: its own ports,
// and every other server through the proxies of id's links to it.
func (e *Ensemble) peerLines(id int) string {
	var b strings.Builder
	for j, s := range e.servers {
		q, el := s.quorum, s.election
		if ps := e.peers[[2]int{id - 1, j}]; len(ps) == 2 {
			q, el = proxyPort(ps[0]), proxyPort(ps[1])
		}
		fmt.Fprintf(&b, "server.%d=127.0.0.1:%d:%d\n", s.id, q, el)
	}
	return b.String()
}

func proxyPort(p *netproxy.Proxy) int {
	_, port, _ := strings.Cut(p.Addr(), ":")
	n, _ := strconv.Atoi(port)
	return n
}

// waitServing waits until each of servers serves as leader or follower;
// a server whose process exits meanwhile is errExited at once.
func (e *Ensemble) waitServing(ctx context.Context, servers ...*server) error {
	ctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	for _, s := range servers {
		exited := false
		err := poll.Until(ctx, s.name+" to serve", 20*time.Millisecond, func(ctx context.Context) (bool, error) {
			if !s.running() {
				exited = true
				return true, nil
			}
			fctx, fcancel := context.WithTimeout(ctx, time.Second)
			defer fcancel()
			m := s.mode(fctx)
			return m == "leader" || m == "follower" || m == "standalone", nil
		})
		if exited {
			err = fmt.Errorf("waiting for %s to serve: %w", s.name, errExited)
		}
		if err != nil {
			return fmt.Errorf("zkd: %w; its output: %s", err, exitLines(s.out.String(), 5))
		}
	}
	return nil
}

// errExited is a server's process that exited while it was waited for.
var errExited = errors.New("its process exited")

// Names are the servers' names, z1…zN, in order.
func (e *Ensemble) Names() []string {
	out := make([]string, len(e.servers))
	for i, s := range e.servers {
		out[i] = s.name
	}
	return out
}

// Addrs are where the servers take clients, directly.
func (e *Ensemble) Addrs() []string {
	out := make([]string, len(e.servers))
	for i, s := range e.servers {
		out[i] = s.addr()
	}
	return out
}

// Admin is the lab's own connection to the ensemble, directly to every
// server: its view, never cut.
func (e *Ensemble) Admin() *zk.Conn { return e.admin }

// Link is a new link of a client's to server i: a proxy the lab can cut,
// delay and sever. Close closes it.
func (e *Ensemble) Link(i int) (*netproxy.Proxy, error) {
	s := e.servers[i]
	p, err := netproxy.New(func() (string, error) {
		if !s.running() {
			return "", fmt.Errorf("zkd: %s is down", s.name)
		}
		return s.addr(), nil
	})
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.proxies = append(e.proxies, p)
	e.mu.Unlock()
	return p, nil
}

// Leader is the index of the server that leads now, -1 if none does.
func (e *Ensemble) Leader(ctx context.Context) int {
	for i, s := range e.servers {
		if s.running() && s.mode(ctx) == "leader" {
			return i
		}
	}
	return -1
}

// Serves reports whether server i serves its clients now (it leads or
// follows a leader): a server cut off from the quorum stops, and drops
// its clients, once it sees the quorum gone.
func (e *Ensemble) Serves(ctx context.Context, i int) bool {
	return e.servers[i].running() && e.servers[i].mode(ctx) != ""
}

// Kill kills server i as a crash of its machine does; its data stays.
func (e *Ensemble) Kill(i int) { e.servers[i].kill() }

// JumpClock moves server i's wall clock by d (negative: back) from where
// it is. The ensemble must have been started with Options.Clocks.
func (e *Ensemble) JumpClock(i int, d time.Duration) error {
	c := e.servers[i].clock
	if c == nil {
		return fmt.Errorf("zkd: %s's clock is the machine's: the ensemble was started without Options.Clocks", e.servers[i].name)
	}
	return c.Jump(d)
}

// DriftClock runs server i's wall clock at rate times the machine's (2:
// twice as fast), from where it is. The ensemble must have been started
// with Options.Clocks.
func (e *Ensemble) DriftClock(i int, rate float64) error {
	c := e.servers[i].clock
	if c == nil {
		return fmt.Errorf("zkd: %s's clock is the machine's: the ensemble was started without Options.Clocks", e.servers[i].name)
	}
	return c.Drift(rate)
}

// ResetClock sets server i's wall clock right again.
func (e *Ensemble) ResetClock(i int) error {
	if c := e.servers[i].clock; c != nil {
		return c.Reset()
	}
	return nil
}

// ClockOffset is how far server i's wall clock is from the machine's.
func (e *Ensemble) ClockOffset(i int) time.Duration {
	if c := e.servers[i].clock; c != nil {
		return c.Offset()
	}
	return 0
}

// Restart starts server i again on its data and waits until it serves;
// one whose process exits first is started again (restartTries in all),
// its exit's last lines in the error if it never serves. A transaction
// log the kill left without its header is removed first (dropTornLogs).
func (e *Ensemble) Restart(ctx context.Context, i int) error {
	s := e.servers[i]
	if s.running() {
		return nil
	}
	if err := dropTornLogs(s.dir); err != nil {
		return fmt.Errorf("zkd: %s's data: %w", s.name, err)
	}
	var err error
	for range restartTries {
		if err = s.run(); err != nil {
			return err
		}
		if err = e.waitServing(ctx, s); !errors.Is(err, errExited) {
			return err
		}
	}
	return err
}

// restartTries is how many times Restart starts a server whose process
// exits before it serves, as a supervisor starts a crashed service again.
const restartTries = 3

// Isolate cuts server i off from every other server, both ways, until
// HealPeers: its clients still reach it, and it stops serving them once it
// sees it has lost the quorum.
func (e *Ensemble) Isolate(i int) {
	for pair, ps := range e.peers {
		if pair[0] == i || pair[1] == i {
			for _, p := range ps {
				p.Cut()
			}
		}
	}
}

// HealPeers lets every server reach every other again.
func (e *Ensemble) HealPeers() {
	for _, ps := range e.peers {
		for _, p := range ps {
			p.Heal()
		}
	}
}

// SessionAlive reports whether the ensemble still has session id, as its
// leader's session tracker says; an error when no leader answers.
func (e *Ensemble) SessionAlive(ctx context.Context, id int64) (bool, error) {
	sessions, err := e.Sessions(ctx)
	return sessions[id], err
}

// Sessions are the sessions the ensemble has now, as its leader's session
// tracker lists them; an error when no leader answers.
func (e *Ensemble) Sessions(ctx context.Context) (map[int64]bool, error) {
	l := e.Leader(ctx)
	if l < 0 {
		return nil, errors.New("zkd: no server leads")
	}
	out, err := e.servers[l].flw(ctx, "dump")
	if err != nil {
		return nil, fmt.Errorf("zkd: asking %s for its sessions: %w", e.servers[l].name, err)
	}
	tracker, _, ok := strings.Cut(out, "ephemeral nodes dump:")
	if !ok || !strings.Contains(tracker, "SessionTracker dump:") {
		return nil, fmt.Errorf("zkd: %s's dump has no session tracker", e.servers[l].name)
	}
	sessions := map[int64]bool{}
	for _, f := range strings.Fields(tracker) {
		if h, ok := strings.CutPrefix(f, "0x"); ok {
			if id, err := strconv.ParseUint(h, 16, 64); err == nil {
				sessions[int64(id)] = true
			}
		}
	}
	return sessions, nil
}

// Died says whether server i exited during the run though the lab did
// not kill it (a crash of its own, an OOM kill), and, if so, the last lines
// it printed.
func (e *Ensemble) Died(i int) (bool, string) { return e.servers[i].died() }

// Close ends every server, link and connection of the ensemble and removes
// its directory.
func (e *Ensemble) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	proxies := e.proxies
	e.mu.Unlock()
	if e.admin != nil {
		e.admin.Close()
	}
	for _, s := range e.servers {
		s.kill()
	}
	for _, ps := range e.peers {
		proxies = append(proxies, ps...)
	}
	for _, p := range proxies {
		p.Close()
	}
	return os.RemoveAll(e.root)
}

// Silent is a go-zookeeper logger that says nothing: what matters is on the
// history.
type Silent struct{}

// Printf says nothing.
func (Silent) Printf(string, ...any) {}

// Root is the ensemble's directory: every server's data is under it.
func (e *Ensemble) Root() string { return e.root }
