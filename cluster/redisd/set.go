package redisd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/internal/clockshim"
	"github.com/locklab/locklab/internal/piddir"
	"github.com/locklab/locklab/internal/poll"
)

// Options configure a Set.
type Options struct {
	// Log, if not nil, receives every server's output (locklab's
	// --verbose); otherwise only its last lines are kept, for errors.
	Log io.Writer
	// Clocks gives every server a wall clock the lab can move (JumpClock):
	// the clock shim, built with the system's C compiler, preloaded into
	// it.
	Clocks bool
}

// Set is a group of redis-server processes started by the lab on loopback:
// one primary with asynchronous replicas (StartReplicated), or independent
// primaries (StartIndependent, for Redlock). Clients reach a server through
// a proxy of their own (Link); replicas reach the primary through a proxy
// each, so that replication can be cut apart from the clients' links. All
// methods are safe for concurrent use.
type Set struct {
	root    string
	servers []*server

	mu      sync.Mutex
	primary int // the server replicas follow; -1 for independent primaries
	repl    map[int]*netproxy.Proxy
	proxies []*netproxy.Proxy
	closed  bool
	// external: the user's own Redis (Connect), not started by the lab.
	external bool
}

// StartIndependent starts n primaries that know nothing of each other,
// named r1…rn.
func StartIndependent(ctx context.Context, n int, opts Options) (*Set, error) {
	return start(ctx, n, -1, opts)
}

// StartReplicated starts a primary, r1, and replicas of it, r2…, each
// replicating asynchronously through a proxy of its own. It returns once
// every replica has finished its first sync.
func StartReplicated(ctx context.Context, replicas int, opts Options) (*Set, error) {
	return start(ctx, 1+replicas, 0, opts)
}

func start(ctx context.Context, n, primary int, opts Options) (_ *Set, err error) {
	if n < 1 {
		return nil, fmt.Errorf("redisd: %d servers: at least one is needed", n)
	}
	bin, err := Find()
	if err != nil {
		return nil, err
	}
	root, err := piddir.Make("", "redis")
	if err != nil {
		return nil, fmt.Errorf("redisd: %w", err)
	}
	s := &Set{root: root, primary: primary, repl: map[int]*netproxy.Proxy{}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	shim := ""
	if opts.Clocks {
		if shim, err = clockshim.Build(ctx); err != nil {
			return nil, err
		}
	}
	for i := range n {
		srv, err := newServer(bin, root, fmt.Sprintf("r%d", i+1))
		if err != nil {
			return nil, err
		}
		if opts.Log != nil {
			srv.log = opts.Log
		}
		if shim != "" {
			if srv.clock, err = clockshim.New(srv.dir); err != nil {
				return nil, err
			}
			srv.shim = shim
		}
		s.servers = append(s.servers, srv)
	}
	if err := s.servers[max(primary, 0)].start(ctx); err != nil {
		return nil, err
	}
	for i, srv := range s.servers {
		if i == max(primary, 0) {
			continue
		}
		if primary >= 0 {
			p, err := netproxy.New(s.primaryAddr)
			if err != nil {
				return nil, err
			}
			s.repl[i] = p
			host, port, _ := net.SplitHostPort(p.Addr())
			srv.args = append(srv.args, "--replicaof", host, port)
		}
		if err := srv.start(ctx); err != nil {
			return nil, err
		}
	}
	if primary >= 0 {
		for i := range s.servers {
			if i != primary {
				if err := s.waitSynced(ctx, i); err != nil {
					return nil, err
				}
			}
		}
	}
	return s, nil
}

// Names are the servers' names, r1…rn, in order.
func (s *Set) Names() []string {
	out := make([]string, len(s.servers))
	for i, srv := range s.servers {
		out[i] = srv.name
	}
	return out
}

// Primary is the index of the server the replicas follow, or -1 for a set
// of independent primaries.
func (s *Set) Primary() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.primary
}

// primaryAddr is the current primary's address, for the replication
// proxies: a replica that reconnects after a failover reaches the new one.
func (s *Set) primaryAddr() (string, error) {
	s.mu.Lock()
	p := s.primary
	s.mu.Unlock()
	if p < 0 {
		return "", errors.New("redisd: independent primaries replicate nothing")
	}
	return s.servers[p].upstream()
}

// Link is a new proxy to server i for one client: cut, delayed or severed
// apart from every other client's link. The Set closes it with itself.
func (s *Set) Link(i int) (*netproxy.Proxy, error) {
	return s.link(s.servers[i].upstream)
}

// PrimaryLink is a new proxy that reaches whichever server is the primary
// when a connection is made, as a client told of a failover does (by
// Sentinel, say): connections made before a failover stay where they were.
func (s *Set) PrimaryLink() (*netproxy.Proxy, error) {
	return s.link(s.primaryAddr)
}

func (s *Set) link(upstream func() (string, error)) (*netproxy.Proxy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("redisd: the set is closed")
	}
	p, err := netproxy.New(upstream)
	if err != nil {
		return nil, err
	}
	s.proxies = append(s.proxies, p)
	return p, nil
}

// Admin is the lab's own client of server i, connected directly (never
// faulted): what the server holds, as the lab reads it. nil while the
// server is down.
func (s *Set) Admin(i int) *redis.Client { return s.servers[i].Admin() }

// JumpClock moves server i's wall clock by d (negative: back) from where
// it is; Redis expires keys by it. The set must have been started with
// Options.Clocks.
func (s *Set) JumpClock(i int, d time.Duration) error {
	c := s.servers[i].clock
	if c == nil {
		return fmt.Errorf("redisd: %s's clock is the machine's: the set was started without Options.Clocks", s.servers[i].name)
	}
	return c.Jump(d)
}

// DriftClock runs server i's wall clock at rate times the machine's (2:
// twice as fast), from where it is; Redis expires keys by it. The set must
// have been started with Options.Clocks.
func (s *Set) DriftClock(i int, rate float64) error {
	c := s.servers[i].clock
	if c == nil {
		return fmt.Errorf("redisd: %s's clock is the machine's: the set was started without Options.Clocks", s.servers[i].name)
	}
	return c.Drift(rate)
}

// ResetClock sets server i's wall clock right again (nothing to do for a
// server whose clock the lab never moved).
func (s *Set) ResetClock(i int) error {
	if c := s.servers[i].clock; c != nil {
		return c.Reset()
	}
	return nil
}

// ClockOffset is how far server i's wall clock is from the machine's.
func (s *Set) ClockOffset(i int) time.Duration {
	if c := s.servers[i].clock; c != nil {
		return c.Offset()
	}
	return 0
}

// Replication is replica i's link to the primary (nil for the primary
// itself, or independent primaries): cut it to keep the primary's writes
// from reaching the replica.
func (s *Set) Replication(i int) *netproxy.Proxy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repl[i]
}

// Kill ends server i at once (SIGKILL): what it had not replicated is lost.
// A server of the user's own (External) is not the lab's to kill: nothing
// happens.
func (s *Set) Kill(i int) {
	if !s.external {
		s.servers[i].kill()
	}
}

// Restart starts killed server i again on a free port, with what it
// saved: nothing, as the lab starts Redis (no RDB, no AOF) — a primary
// comes back empty, and its replicas, syncing from it, empty too.
func (s *Set) Restart(ctx context.Context, i int) error {
	if s.external {
		return errors.New("redisd: a Redis of your own is not the lab's to restart")
	}
	if s.servers[i].Addr() != "" {
		return nil
	}
	return s.servers[i].start(ctx)
}

// Promote makes replica i the primary, as Sentinel's failover does: REPLICAOF
// NO ONE on it, then every other running replica follows it (its
// replication link is severed, and it reconnects through its proxy to the
// new primary). The old primary, if it still runs, is left as it is.
func (s *Set) Promote(ctx context.Context, i int) error {
	if s.external {
		return errors.New("redisd: a Redis of your own is not the lab's to fail over")
	}
	if s.Primary() < 0 {
		return errors.New("redisd: independent primaries have no replica to promote")
	}
	admin := s.Admin(i)
	if admin == nil {
		return fmt.Errorf("redisd: %s is down and cannot be promoted", s.servers[i].name)
	}
	if err := admin.SlaveOf(ctx, "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("redisd: promoting %s: %w", s.servers[i].name, err)
	}
	s.mu.Lock()
	old := s.primary
	s.primary = i
	p := s.repl[i]
	delete(s.repl, i)
	s.mu.Unlock()
	if p != nil {
		p.Close()
	}
	if old >= 0 && s.Admin(old) != nil {
		// The old primary, alive, follows the new one through a link of
		// its own, as Sentinel reconfigures it when it comes back.
		rp, err := netproxy.New(s.primaryAddr)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.repl[old] = rp
		s.mu.Unlock()
		host, port, _ := net.SplitHostPort(rp.Addr())
		if err := s.Admin(old).SlaveOf(ctx, host, port).Err(); err != nil {
			return fmt.Errorf("redisd: %s following %s: %w", s.servers[old].name, s.servers[i].name, err)
		}
	}
	s.mu.Lock()
	links := make([]*netproxy.Proxy, 0, len(s.repl))
	for _, rp := range s.repl {
		links = append(links, rp)
	}
	s.mu.Unlock()
	for _, rp := range links {
		rp.Sever()
	}
	return nil
}

// Role is server i's replication role as it reports it ("master" or
// "slave"), and for a replica whether its link to the primary is up.
func (s *Set) Role(ctx context.Context, i int) (role string, linkUp bool, err error) {
	admin := s.Admin(i)
	if admin == nil {
		return "", false, fmt.Errorf("redisd: %s is down", s.servers[i].name)
	}
	info, err := admin.Info(ctx, "replication").Result()
	if err != nil {
		return "", false, fmt.Errorf("redisd: asking %s its role: %w", s.servers[i].name, err)
	}
	fields := parseInfo(info)
	return fields["role"], fields["master_link_status"] == "up", nil
}

// waitSynced waits until replica i reports its link to the primary up.
func (s *Set) waitSynced(ctx context.Context, i int) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err := poll.Until(ctx, s.servers[i].name+" to sync with the primary", 10*time.Millisecond, func(ctx context.Context) (bool, error) {
		role, up, err := s.Role(ctx, i)
		return err == nil && role == "slave" && up, err
	})
	if err != nil {
		return fmt.Errorf("%w; its output: %s", err, s.servers[i].out.Last(3))
	}
	return nil
}

// Died says whether the i-th server's process exited though the lab did
// not kill it (a crash of redis-server's own, the machine's OOM killer),
// and, if so, the last lines it printed: what an error met on it stems
// from.
func (s *Set) Died(i int) (bool, string) { return s.servers[i].died() }

// Close stops every server and proxy and removes the data directories.
func (s *Set) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	proxies := s.proxies
	for _, p := range s.repl {
		proxies = append(proxies, p)
	}
	s.mu.Unlock()
	for _, srv := range s.servers {
		srv.kill()
	}
	for _, p := range proxies {
		p.Close()
	}
	if s.root == "" {
		return nil // a Redis of the user's own: no directory of the lab's
	}
	return os.RemoveAll(s.root)
}

// parseInfo reads the "field:value" lines of an INFO answer.
func parseInfo(info string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out
}

// CPU is the CPU time, user and system, the running servers have used so
// far, as each reports it (INFO cpu).
func (s *Set) CPU(ctx context.Context) (time.Duration, error) {
	var sum time.Duration
	for i, srv := range s.servers {
		admin := s.Admin(i)
		if admin == nil {
			continue
		}
		info, err := admin.Info(ctx, "cpu").Result()
		if err != nil {
			return 0, fmt.Errorf("redisd: asking %s its CPU time: %w", srv.name, err)
		}
		fields := parseInfo(info)
		for _, k := range []string{"used_cpu_user", "used_cpu_sys"} {
			v, err := strconv.ParseFloat(fields[k], 64)
			if err != nil {
				return 0, fmt.Errorf("redisd: %s's %s: %q", srv.name, k, fields[k])
			}
			sum += time.Duration(v * float64(time.Second))
		}
	}
	return sum, nil
}

// Connect makes a Set of a Redis of the user's own, given as addresses
// (host:port) or redis:// and rediss:// URLs (with a password, a database):
// one server is a primary (its replicas, if any, are the user's, out of the
// lab's reach), several are independent masters (Redlock's). Nothing is
// started: Kill and Promote refuse (External says so), and Close closes
// only the lab's own connections. Every server must answer PING.
func Connect(ctx context.Context, urls []string) (*Set, error) {
	if len(urls) == 0 {
		return nil, errors.New("redisd: no Redis address given")
	}
	s := &Set{primary: 0, repl: map[int]*netproxy.Proxy{}, external: true}
	if len(urls) > 1 {
		s.primary = -1
	}
	for i, u := range urls {
		opts, err := clientOptions(u)
		if err != nil {
			return nil, err
		}
		srv := &server{name: fmt.Sprintf("r%d", i+1), addr: opts.Addr, opts: opts}
		admin := redis.NewClient(srv.clientOptions(opts.Addr))
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = admin.Ping(pctx).Err()
		cancel()
		if err != nil {
			admin.Close()
			s.Close()
			return nil, fmt.Errorf("redisd: the Redis at %s does not answer: %w", u, err)
		}
		srv.admin = admin
		s.servers = append(s.servers, srv)
	}
	return s, nil
}

// clientOptions reads an address or a redis:// URL.
func clientOptions(u string) (*redis.Options, error) {
	if !strings.Contains(u, "://") {
		if _, _, err := net.SplitHostPort(u); err != nil {
			return nil, fmt.Errorf("redisd: %q: want host:port or a redis:// URL", u)
		}
		return &redis.Options{Addr: u}, nil
	}
	opts, err := redis.ParseURL(u)
	if err != nil {
		return nil, fmt.Errorf("redisd: %q: %w", u, err)
	}
	return opts, nil
}

// External reports whether the Set is a Redis of the user's own (Connect):
// the lab can neither kill nor promote its servers.
func (s *Set) External() bool { return s.external }

// ClientOptions are the options of a client of server i that reaches it
// at addr (a proxy's): its password, database and TLS, if it has them.
func (s *Set) ClientOptions(i int, addr string) *redis.Options {
	return s.servers[i].clientOptions(addr)
}
