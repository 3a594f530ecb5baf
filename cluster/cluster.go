package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Defaults for Config fields left zero.
const (
	DefaultMembers    = 3
	DefaultTickMs     = 10
	DefaultElectionMs = 100
	// DefaultStartTimeout bounds how long Start waits for a leader.
	DefaultStartTimeout = 20 * time.Second
)

// Sentinel errors. Test them with errors.Is.
var (
	// ErrExternal is returned by member faults on a cluster the lab does not own.
	ErrExternal = errors.New("not available on an external cluster")
	// ErrNoLeader means no member is recognised as leader by a majority.
	ErrNoLeader = errors.New("no leader")
	// ErrUnknownMember names a member that is not part of the cluster.
	ErrUnknownMember = errors.New("unknown member")
	// ErrUnknownClient names a client that was never created.
	ErrUnknownClient = errors.New("unknown client")
	// ErrMemberDown is returned when an operation needs a running member.
	ErrMemberDown = errors.New("member is down")
	// ErrClosed is returned by a cluster after Close.
	ErrClosed = errors.New("cluster is closed")
)

// Config describes an embedded cluster. The zero value is a quiet 3-member
// cluster with 10 ms ticks and a 100 ms election timeout (so the minimum lease
// TTL etcd accepts is 1 s) and no fsync.
type Config struct {
	// Members is the number of members: 1, 3 or 5 (any positive number works).
	Members int
	// TickMs and ElectionMs are etcd's heartbeat and election timeouts.
	// ElectionMs must be at least 5×TickMs.
	TickMs, ElectionMs uint
	// Fsync turns etcd's fsync back on. The lab does not test etcd's durability,
	// so it is off by default; restarts still keep data (the OS page cache does).
	Fsync bool
	// Logger receives etcd's server logs and the lab's client logs.
	// Nil silences them.
	Logger *zap.Logger
	// Dir is where member data directories are created (each run gets a fresh
	// temporary directory inside it, removed by Close). Empty means os.TempDir().
	Dir string
}

func (c Config) withDefaults() (Config, error) {
	if c.Members == 0 {
		c.Members = DefaultMembers
	}
	if c.TickMs == 0 {
		c.TickMs = DefaultTickMs
	}
	if c.ElectionMs == 0 {
		c.ElectionMs = DefaultElectionMs
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	switch {
	case c.Members < 1:
		return c, fmt.Errorf("cluster: members must be at least 1, got %d", c.Members)
	case c.ElectionMs < 5*c.TickMs:
		return c, fmt.Errorf("cluster: election timeout %d ms must be at least 5 × tick %d ms", c.ElectionMs, c.TickMs)
	}
	return c, nil
}

// Cluster is a set of etcd members, embedded or external, and the lab clients
// connected to them. Each lab client reaches its member through a proxy of its
// own, so client faults touch one client only. All methods are safe for
// concurrent use.
type Cluster struct {
	cfg      Config
	external *External // nil for an embedded cluster
	dir      string    // temp dir holding data dirs; "" when external
	members  []*member // in name order m1, m2, …
	admin    *clientv3.Client
	// answering is the index of the member that last answered LeaseAlive.
	answering atomic.Int32

	mu        sync.Mutex
	clients   map[string]*Client
	partition [][]string // current groups; nil when healed
	// cut are the peer links cut now, each on the side of one member's
	// running server (see applyPartition): etcd's MendPeer of a link that
	// is not cut starts its pipeline a second time, and the next CutPeer
	// of it then waits for ever for the first one's workers.
	cut    map[peerLink]bool
	closed bool
}

// Members returns the member names, m1…mN.
func (c *Cluster) Members() []string {
	names := make([]string, len(c.members))
	for i, m := range c.members {
		names[i] = m.name
	}
	return names
}

// IsExternal reports whether the cluster was reached with Connect rather than
// started by the lab; member faults are not available then.
func (c *Cluster) IsExternal() bool { return c.external != nil }

// Admin returns the lab's own client, which talks to every member without going
// through any faulted link. Use it to observe the cluster, not to run workloads.
func (c *Cluster) Admin() *clientv3.Client { return c.admin }

// Endpoints returns the client endpoints of the members, in member order.
// For an embedded cluster they stay the same across member restarts.
func (c *Cluster) Endpoints() []string {
	eps := make([]string, len(c.members))
	for i, m := range c.members {
		eps[i] = m.endpoint()
	}
	return eps
}

func (c *Cluster) member(name string) (*member, error) {
	for _, m := range c.members {
		if m.name == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("%w %q (members: %v)", ErrUnknownMember, name, c.Members())
}

// Close closes, in order, the lab clients, the admin client, the members and
// the proxies, then removes the data directories. It is safe to call twice.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	clients := make([]*Client, 0, len(c.clients))
	for _, cl := range c.clients {
		clients = append(clients, cl)
	}
	c.mu.Unlock()

	var errs []error
	for _, cl := range clients {
		errs = append(errs, cl.close())
	}
	if c.admin != nil {
		errs = append(errs, c.admin.Close())
	}
	// Sever every proxied connection first so that no member waits for a
	// client stream to drain, then stop the members in parallel.
	for _, m := range c.members {
		m.sever()
	}
	var wg sync.WaitGroup
	for _, m := range c.members {
		wg.Go(func() { m.stop(true) })
	}
	wg.Wait()
	for _, m := range c.members {
		errs = append(errs, m.closeProxies())
	}
	if c.dir != "" {
		errs = append(errs, os.RemoveAll(c.dir))
	}
	return errors.Join(slices.DeleteFunc(errs, func(e error) bool {
		return e == nil || errors.Is(e, context.Canceled)
	})...)
}

func (c *Cluster) checkOpen() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	return nil
}
