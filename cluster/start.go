package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/internal/piddir"
)

// Start starts an embedded cluster and returns once it has a leader and every
// member has joined. Every member listens on loopback ports the kernel
// chooses, behind loopback proxies whose ports the kernel chooses too, so
// clusters started at the same time, in one process or many, never collide.
// ctx bounds the start only; Close ends the cluster.
func Start(ctx context.Context, cfg Config) (_ *Cluster, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	// Named after this process: a run killed before it could remove it
	// leaves it to the next run's Make.
	dir, err := piddir.Make(cfg.Dir, "cluster")
	if err != nil {
		return nil, fmt.Errorf("cluster: data directory: %w", err)
	}
	c := &Cluster{cfg: cfg, dir: dir, clients: map[string]*Client{}}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()

	var peers []string
	for i := range cfg.Members {
		m := &member{name: fmt.Sprintf("m%d", i+1), dir: filepath.Join(dir, fmt.Sprintf("m%d", i+1))}
		c.members = append(c.members, m)
		if m.peerProxy, err = netproxy.New(m.peerTarget); err != nil {
			return nil, err
		}
		if m.clientProxy, err = netproxy.New(m.clientTarget); err != nil {
			return nil, err
		}
		peers = append(peers, fmt.Sprintf("%s=http://%s", m.name, m.peerProxy.Addr()))
	}
	initial := strings.Join(peers, ",")
	// Members start one after another without waiting for each other: a
	// member whose peers are not up yet finds their proxies refusing at once
	// rather than timing out, so the whole cluster is ready in about one
	// election.
	for _, m := range c.members {
		if err := c.startOn(m, initial); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
	}
	if c.admin, err = c.newAdmin(c.Endpoints()); err != nil {
		return nil, err
	}
	for _, m := range c.members {
		if m.admin, err = c.newAdmin([]string{m.endpoint()}); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultStartTimeout)
	defer cancel()
	for _, m := range c.members {
		e, _ := m.server()
		select {
		case <-e.Server.ReadyNotify():
		case err := <-e.Err():
			return nil, fmt.Errorf("cluster: %s failed while starting: %w", m.name, err)
		case <-ctx.Done():
			return nil, fmt.Errorf("cluster: waiting for %s to join: %w", m.name, ctx.Err())
		}
	}
	if _, err := c.WaitLeader(ctx); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	return c, nil
}

// Stop stops member name gracefully: it hands leadership off first if it leads.
func (c *Cluster) Stop(name string) error {
	m, err := c.embeddedMember(name)
	if err != nil {
		return err
	}
	m.stop(false)
	return nil
}

// Kill stops member name the way a crash would: every connection to it drops
// at once and it does not hand leadership off. Its data directory stays for
// Restart.
func (c *Cluster) Kill(name string) error {
	m, err := c.embeddedMember(name)
	if err != nil {
		return err
	}
	m.stop(true)
	return nil
}

// Restart starts a stopped or killed member again on its own data directory,
// so it keeps its identity and its data. Any partition in force is applied to
// it again before Restart returns. Restart waits until the member has rejoined
// (which needs a quorum it can reach), unless it is cut off from a majority.
func (c *Cluster) Restart(ctx context.Context, name string) error {
	m, err := c.embeddedMember(name)
	if err != nil {
		return err
	}
	if m.running() {
		return fmt.Errorf("restart %s: already running", name)
	}
	// The initial cluster is ignored on a data dir that has a WAL, but the
	// configuration must still validate.
	c.forgetCuts(m.name) // its stopped server's cuts went with it
	if err := c.startOn(m, c.initialCluster()); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	c.mu.Lock()
	groups := c.partition
	c.mu.Unlock()
	if groups != nil {
		c.applyPartition(groups, m)
		if !c.inMajority(groups, m.name) {
			return nil
		}
	}
	e, err := m.server()
	if err != nil {
		return err
	}
	select {
	case <-e.Server.ReadyNotify():
		return nil
	case err := <-e.Err():
		return fmt.Errorf("restart %s: %w", name, err)
	case <-ctx.Done():
		return fmt.Errorf("restart %s: waiting for it to rejoin: %w", name, ctx.Err())
	}
}

func (c *Cluster) initialCluster() string {
	peers := make([]string, len(c.members))
	for i, m := range c.members {
		peers[i] = fmt.Sprintf("%s=http://%s", m.name, m.peerProxy.Addr())
	}
	return strings.Join(peers, ",")
}

// embeddedMember resolves a member a fault can act on.
func (c *Cluster) embeddedMember(name string) (*member, error) {
	if c.IsExternal() {
		return nil, fmt.Errorf("member %s: %w", name, ErrExternal)
	}
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	return c.member(name)
}

// Running reports whether member name is up (for an external cluster: always).
func (c *Cluster) Running(name string) bool {
	m, err := c.member(name)
	if err != nil {
		return false
	}
	return c.IsExternal() || m.running()
}
