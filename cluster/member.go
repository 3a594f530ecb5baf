package cluster

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/types"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"google.golang.org/grpc"

	"github.com/locklab/locklab/cluster/netproxy"
)

// member is one etcd member. For an embedded member, its peer and client
// addresses are proxies whose ports never change, while the member itself
// listens on fresh kernel-chosen ports at every start; the proxies follow it.
type member struct {
	name string

	// embedded only
	dir         string // data dir, kept across restarts
	peerProxy   *netproxy.Proxy
	clientProxy *netproxy.Proxy

	// external only
	extEndpoint string

	admin *clientv3.Client // talks to this member only, through no faulted link

	mu         sync.Mutex
	id         types.ID
	etcd       *embed.Etcd // nil while down
	peerAddr   string      // the running member's own listening addresses
	clientAddr string
	grpcs      []*grpc.Server // the running member's gRPC servers
}

// endpoint is the URL clients use to reach the member.
func (m *member) endpoint() string {
	if m.clientProxy == nil {
		return m.extEndpoint
	}
	return "http://" + m.clientProxy.Addr()
}

func (m *member) server() (*embed.Etcd, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.etcd == nil {
		return nil, fmt.Errorf("%s: %w", m.name, ErrMemberDown)
	}
	return m.etcd, nil
}

func (m *member) running() bool {
	_, err := m.server()
	return err == nil
}

// clientTarget is the upstream of every proxy that carries client traffic to m.
func (m *member) clientTarget() (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.etcd == nil {
		return "", ErrMemberDown
	}
	return m.clientAddr, nil
}

func (m *member) peerTarget() (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.etcd == nil {
		return "", ErrMemberDown
	}
	return m.peerAddr, nil
}

// embedConfig builds the etcd configuration for one start of m: its
// clients' port is client, a free loopback address (see freeLoopback).
func (c *Cluster) embedConfig(m *member, initialCluster, client string) *embed.Config {
	loopback := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	ec := embed.NewConfig()
	ec.Name = m.name
	ec.Dir = m.dir
	ec.ListenPeerUrls = []url.URL{loopback}
	// A port of its own, not 127.0.0.1:0: etcd's HTTP/JSON gateway dials
	// the address it was told to listen on, and port 0 reaches nothing.
	ec.ListenClientUrls = []url.URL{{Scheme: "http", Host: client}}
	ec.AdvertisePeerUrls = []url.URL{{Scheme: "http", Host: m.peerProxy.Addr()}}
	ec.AdvertiseClientUrls = []url.URL{{Scheme: "http", Host: m.clientProxy.Addr()}}
	ec.InitialCluster = initialCluster
	ec.InitialClusterToken = "locklab"
	ec.TickMs = c.cfg.TickMs
	ec.ElectionMs = c.cfg.ElectionMs
	ec.UnsafeNoFsync = !c.cfg.Fsync
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(c.cfg.Logger.Named(m.name))
	// The member's gRPC servers, kept so that a kill stops them — and waits
	// for their handlers — before the server's storage closes: a request
	// still being served then reads a closed bolt database, and the panic
	// ends the whole process (etcd issue 17223; seen here once, a
	// serializable Range, with the machine busy).
	ec.GRPCAdditionalServerOptions = append(ec.GRPCAdditionalServerOptions, grpc.WaitForHandlers(true))
	ec.ServiceRegister = m.keepServer
	return ec
}

// keepServer notes one of m's gRPC servers as it starts.
func (m *member) keepServer(s *grpc.Server) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.grpcs = append(m.grpcs, s)
}

// stopServing stops m's gRPC servers, each once every handler of it has
// returned, or after grpcStopBound (a handler that ignores its cancelled
// context): what reads its storage has read before the storage closes.
func (m *member) stopServing() {
	m.mu.Lock()
	servers := m.grpcs
	m.grpcs = nil
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(s.Stop)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(grpcStopBound)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// grpcStopBound bounds how long a kill waits for a member's handlers.
const grpcStopBound = 5 * time.Second

// startOn starts m with the cluster's configuration on a free loopback
// port for its clients, trying another if the port was taken meanwhile.
func (c *Cluster) startOn(m *member, initialCluster string) error {
	var err error
	for range 3 {
		var client string
		if client, err = freeLoopback(); err != nil {
			return err
		}
		if err = m.start(c.embedConfig(m, initialCluster, client)); !errors.Is(err, syscall.EADDRINUSE) {
			return err
		}
	}
	return err
}

// freeLoopback is a loopback address whose port the kernel just chose and
// freed: free, unless another listener takes it first (startOn tries
// again then).
func freeLoopback() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("a client port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// start runs m on its data dir: a new member the first time, the same member
// with its data afterwards. It returns once the server runs, not once it has
// joined (wait on ReadyNotify for that).
func (m *member) start(ec *embed.Config) error {
	m.mu.Lock()
	m.grpcs = nil // the servers of its last start are stopped
	m.mu.Unlock()
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return fmt.Errorf("start %s: %w", m.name, err)
	}
	m.mu.Lock()
	m.etcd = e
	m.id = e.Server.MemberID()
	m.peerAddr = e.Peers[0].Listener.Addr().String()
	m.clientAddr = e.Clients[0].Addr().String()
	m.mu.Unlock()
	return nil
}

// stop takes m down. A kill drops every connection first, as a crashed
// process's kernel would, and skips the graceful leader hand-off; a plain stop
// lets etcd hand leadership off. Stopping a stopped member does nothing.
func (m *member) stop(kill bool) {
	m.mu.Lock()
	e := m.etcd
	m.etcd = nil
	m.mu.Unlock()
	if e == nil {
		return
	}
	if kill {
		m.sever()
		m.stopServing()
		e.Server.HardStop()
	}
	e.Close()
	// Connections accepted while it was closing reached a dying server.
	m.sever()
}

func (m *member) sever() {
	if m.clientProxy != nil {
		m.clientProxy.Sever()
		m.peerProxy.Sever()
	}
}

func (m *member) closeProxies() error {
	if m.admin != nil {
		m.admin.Close()
	}
	if m.clientProxy == nil {
		return nil
	}
	if err := m.clientProxy.Close(); err != nil {
		return err
	}
	return m.peerProxy.Close()
}

// peerID is m's etcd member id (set at its first start).
func (m *member) peerID() types.ID {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.id
}
