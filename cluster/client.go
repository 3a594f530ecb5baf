package cluster

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/locklab/locklab/cluster/grpcwire"
	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/internal/pausegate"
)

// clientDialTimeout bounds the etcd client's first connection.
const clientDialTimeout = 2 * time.Second

// Client is one lab client: an etcd client connection of its own that
// reaches one member through a proxy of its own, so that it alone can be cut,
// delayed or paused. Its methods are safe for concurrent use.
type Client struct {
	name     string
	member   string
	proxy    *netproxy.Proxy
	etcd     atomic.Pointer[clientv3.Client]
	dial     func() (*clientv3.Client, error)
	lease    atomic.Int64
	pause    pausegate.Gate
	crash    crashHooks
	reqs     atomic.Int64
	answered atomic.Int64
	wired    atomic.Bool  // the link is read (ReadWire): it counts requests and wake-ups
	wakes    atomic.Int64 // watch responses that carried events
	atWrite  atomic.Bool  // the link fails one way at the next write (CutAnswersAtWrite)
	atRenew  atomic.Bool  // the link fails one way at the next keep-alive (CutAnswersAtKeepAlive)

	grantsMu sync.Mutex
	grants   []LeaseGrant // every lease granted through this client
	granted  map[clientv3.LeaseID]bool
	renewals map[clientv3.LeaseID][]time.Time // each lease's latest keep-alives sent, oldest first
	answers  map[clientv3.LeaseID][]time.Time // each lease's latest keep-alive answers received alive, oldest first

	revokes revokes // the client's revokes, asked and answered
}

// keptRenewals is how many of a lease's latest keep-alives a client keeps:
// etcd's client sends one every half second at most, so this is seconds of
// them, more than the lab's lease monitor ever lags behind.
const keptRenewals = 32

// LeaseGrant is a lease the server granted to a client, when the answer
// arrived (the lease was alive then) and the TTL the answer granted (etcd
// raises a TTL below its minimum; zero: the answer said none).
type LeaseGrant struct {
	ID  clientv3.LeaseID
	At  time.Time
	TTL time.Duration
}

// NewClient connects a new lab client called name to member through a new
// proxy. Names are unique within a cluster.
func (c *Cluster) NewClient(name, member string) (*Client, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	m, err := c.member(member)
	if err != nil {
		return nil, fmt.Errorf("client %s: %w", name, err)
	}
	c.mu.Lock()
	_, dup := c.clients[name]
	c.mu.Unlock()
	if dup {
		return nil, fmt.Errorf("client %s: a client of that name exists", name)
	}
	upstream := m.clientTarget
	if c.IsExternal() {
		host := hostOf(m.extEndpoint)
		upstream = func() (string, error) { return host, nil }
	}
	p, err := netproxy.New(upstream)
	if err != nil {
		return nil, fmt.Errorf("client %s: %w", name, err)
	}
	cfg, err := c.clientConfig([]string{"http://" + p.Addr()}, m)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("client %s: %w", name, err)
	}
	cl := &Client{name: name, member: member, proxy: p}
	cfg.DialOptions = append(cfg.DialOptions, grpc.WithChainUnaryInterceptor(cl.count),
		grpc.WithChainStreamInterceptor(cl.readStream))
	cl.dial = func() (*clientv3.Client, error) { return clientv3.New(cfg) }
	etcd, err := cl.dial()
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("client %s: %w", name, err)
	}
	cl.etcd.Store(etcd)
	cl.pause.Name, cl.pause.OnPark = name, p.Cut
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		cl.close()
		return nil, ErrClosed
	}
	c.clients[name] = cl
	return cl, nil
}

// Client returns the lab client called name.
func (c *Cluster) Client(name string) (*Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, ok := c.clients[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownClient, name)
	}
	return cl, nil
}

// CloseClient closes the lab client called name and forgets it.
func (c *Cluster) CloseClient(name string) error {
	c.mu.Lock()
	cl, ok := c.clients[name]
	delete(c.clients, name)
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownClient, name)
	}
	return cl.close()
}

// clientConfig is the etcd client configuration for endpoints, which lead to
// member m (through a proxy, or directly for an admin client).
func (c *Cluster) clientConfig(endpoints []string, m *member) (clientv3.Config, error) {
	cfg := clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: clientDialTimeout,
		Logger:      c.cfg.Logger.Named("client"),
		// Reconnect soon after a member comes back, not after gRPC's default
		// backoff of up to two minutes.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 500 * time.Millisecond},
			MinConnectTimeout: time.Second,
		})},
	}
	if x := c.external; x != nil {
		cfg.Username, cfg.Password = x.Username, x.Password
		if x.tls != nil {
			t := x.tls.Clone()
			if m != nil && t.ServerName == "" {
				// A client dials its proxy's address; the certificate names the member.
				t.ServerName = hostname(m.extEndpoint)
			}
			cfg.TLS = t
			for i, ep := range cfg.Endpoints {
				cfg.Endpoints[i] = "https://" + hostOf(ep)
			}
		}
	}
	return cfg, nil
}

// newAdmin is a client the lab uses to observe the cluster, through no faulted link.
func (c *Cluster) newAdmin(endpoints []string) (*clientv3.Client, error) {
	cfg, err := c.clientConfig(endpoints, nil)
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster: admin client: %w", err)
	}
	return cli, nil
}

// Name is the client's name, as in "c1".
func (cl *Client) Name() string { return cl.name }

// Member is the name of the member the client is connected to.
func (cl *Client) Member() string { return cl.member }

// Etcd is the client's etcd connection. Locks under test use it. After
// Crash it is a new one: ask again rather than keep it.
func (cl *Client) Etcd() *clientv3.Client { return cl.etcd.Load() }

// Requests is how many unary etcd requests (Put, Txn, Range, LeaseGrant, …)
// the client has sent — with ReadWire, every one that crossed its link,
// whoever sent it. Lease keep-alives and watches are streams, not counted.
func (cl *Client) Requests() int64 { return cl.reqs.Load() }

// Answered is how many of those requests the server answered without an
// error — with ReadWire, every answer that crossed the link: an answer is
// proof the request took effect (or was refused), which a request merely
// sent is not.
func (cl *Client) Answered() int64 { return cl.answered.Load() }

// count counts every unary request and every answer, and notes every lease
// the server grants the client: a lock may take a new lease for each
// acquire, and the lab must know each one to tell when the server ends it.
func (cl *Client) count(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if !cl.wired.Load() {
		cl.reqs.Add(1)
	}
	cl.sending(method)
	r, revoke := req.(*etcdserverpb.LeaseRevokeRequest)
	revoke = revoke && r.ID != 0 && !cl.wired.Load()
	if revoke {
		cl.revokes.asked(r.ID)
	}
	err := invoker(ctx, method, req, reply, cc, opts...)
	if revoke {
		cl.revokes.answered(r.ID, err == nil)
	}
	if err == nil && !cl.wired.Load() { // read off the wire once it is read
		cl.answered.Add(1)
	}
	if r, ok := reply.(*etcdserverpb.LeaseGrantResponse); ok && err == nil && r.ID != 0 {
		cl.noteGrant(r.ID, r.TTL)
	}
	return err
}

// noteGrant records a lease the server granted through the client, with
// the TTL it granted in seconds, once.
func (cl *Client) noteGrant(id, ttl int64) {
	cl.grantsMu.Lock()
	defer cl.grantsMu.Unlock()
	if cl.granted[clientv3.LeaseID(id)] {
		return
	}
	if cl.granted == nil {
		cl.granted = map[clientv3.LeaseID]bool{}
	}
	cl.granted[clientv3.LeaseID(id)] = true
	cl.grants = append(cl.grants, LeaseGrant{ID: clientv3.LeaseID(id), At: time.Now(), TTL: time.Duration(ttl) * time.Second})
}

// ReadWire has the client's link read the traffic of every connection
// opened through it from now on — gRPC, or etcd's HTTP/JSON gateway — so that LeaseGrants includes the leases
// granted to a program that is not the lab's (a lock run as a process,
// given the client's endpoint, Etcd().Endpoints()), and Requests and
// WatchEvents count everything that crosses the link: that program's
// requests and wake-ups, and the lab's own connection's (closed here, so
// that it reconnects through the reader). Cleartext connections only: a
// TLS one is not read, and nothing on it is counted.
func (cl *Client) ReadWire() {
	cl.proxy.SetTap(cl.WireReaders)
	cl.Wired()
}

// WireReaders are the readers of one new connection through the client's
// link, fed what the client sends and what the server answers (see
// ReadWire): a tap of the link's own (netproxy.Proxy.SetTap) calls it for
// each connection, and Wired has the client count off them.
func (cl *Client) WireReaders() (requests, answers func([]byte)) {
	w := &wireReader{hooks: grpcwire.Hooks{Grant: cl.noteGrant, Request: func(method string) { cl.reqs.Add(1); cl.sending(method) },
		Wake: func() { cl.wakes.Add(1) }, KeepAlive: func(id int64) { cl.renewing(); cl.noteRenewal(id) }, KeptAlive: cl.noteKeptAlive,
		Revoking: cl.revokes.asked, Revoke: cl.revokes.answered, Answer: func() { cl.answered.Add(1) }}}
	return w.Request, w.Answer
}

// Wired has the client learn everything off its link's wire from now on,
// not from its own connection's interceptors: its link's connections are
// severed, so that its own reconnects through the reader. The link's tap
// must feed WireReaders (ReadWire sets it).
func (cl *Client) Wired() {
	cl.wired.Store(true)
	cl.proxy.Sever()
}

// IsWired reports whether the client learns off the wire (Wired).
func (cl *Client) IsWired() bool { return cl.wired.Load() }

// Link is the client's link: the proxy it reaches its member through.
func (cl *Client) Link() *netproxy.Proxy { return cl.proxy }

// WatchEvents is how many watch responses carrying events the client has
// received: each one is a moment a watcher was woken by a change (several
// events in one response are one wake-up).
func (cl *Client) WatchEvents() int64 { return cl.wakes.Load() }

// readStream counts, on watch streams, every response that carries events,
// and notes, on keep-alive streams, every keep-alive sent.
func (cl *Client) readStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	switch {
	case err != nil:
		return s, err
	case method == etcdserverpb.Watch_Watch_FullMethodName:
		return watchCounter{ClientStream: s, cl: cl}, nil
	case method == etcdserverpb.Lease_LeaseKeepAlive_FullMethodName:
		return keepAliveNoter{ClientStream: s, cl: cl}, nil
	}
	return s, nil
}

// keepAliveNoter is a keep-alive stream that notes each keep-alive sent,
// and each answer received, unless the wire does.
type keepAliveNoter struct {
	grpc.ClientStream
	cl *Client
}

func (k keepAliveNoter) SendMsg(m any) error {
	if r, ok := m.(*etcdserverpb.LeaseKeepAliveRequest); ok && r.ID != 0 && !k.cl.wired.Load() {
		k.cl.renewing()
	}
	err := k.ClientStream.SendMsg(m)
	if r, ok := m.(*etcdserverpb.LeaseKeepAliveRequest); ok && err == nil && r.ID != 0 && !k.cl.wired.Load() {
		k.cl.noteRenewal(r.ID)
	}
	return err
}

func (k keepAliveNoter) RecvMsg(m any) error {
	err := k.ClientStream.RecvMsg(m)
	if r, ok := m.(*etcdserverpb.LeaseKeepAliveResponse); ok && err == nil && r.ID != 0 && !k.cl.wired.Load() {
		k.cl.noteKeptAlive(r.ID, r.TTL)
	}
	return err
}

// noteRenewal records that the client sent a keep-alive for lease id, now.
func (cl *Client) noteRenewal(id int64) { cl.note(&cl.renewals, id) }

// noteKeptAlive records that the client received an answer to a keep-alive
// for lease id, now, if it says the lease lives (ttl above zero).
func (cl *Client) noteKeptAlive(id, ttl int64) {
	if ttl > 0 {
		cl.note(&cl.answers, id)
	}
}

// note appends now to lease id's times in *times, keeping the latest few.
func (cl *Client) note(times *map[clientv3.LeaseID][]time.Time, id int64) {
	now := time.Now()
	cl.grantsMu.Lock()
	defer cl.grantsMu.Unlock()
	if *times == nil {
		*times = map[clientv3.LeaseID][]time.Time{}
	}
	r := append((*times)[clientv3.LeaseID(id)], now)
	if len(r) > keptRenewals {
		r = slices.Delete(r, 0, len(r)-keptRenewals)
	}
	(*times)[clientv3.LeaseID(id)] = r
}

// LastRenewal is when the client last sent a keep-alive for lease id at or
// before notAfter (false: none is known). A keep-alive sent is the lock
// doing its part to keep its lease; whether it reached the server in time
// is the link's and the server's part. The client keeps only the latest
// few per lease.
func (cl *Client) LastRenewal(id clientv3.LeaseID, notAfter time.Time) (time.Time, bool) {
	cl.grantsMu.Lock()
	defer cl.grantsMu.Unlock()
	r := cl.renewals[id]
	for i := len(r) - 1; i >= 0; i-- {
		if !r[i].After(notAfter) {
			return r[i], true
		}
	}
	return time.Time{}, false
}

// Renewals lists the keep-alives the client sent for lease id that it
// still keeps (the latest few), oldest first.
func (cl *Client) Renewals(id clientv3.LeaseID) []time.Time {
	cl.grantsMu.Lock()
	defer cl.grantsMu.Unlock()
	return slices.Clone(cl.renewals[id])
}

// KeptAlive lists the answers the client received to its keep-alives for
// lease id that said the lease lived, the latest few, oldest first.
func (cl *Client) KeptAlive(id clientv3.LeaseID) []time.Time {
	cl.grantsMu.Lock()
	defer cl.grantsMu.Unlock()
	return slices.Clone(cl.answers[id])
}

// watchCounter is a watch stream that counts the responses with events,
// unless the wire does.
type watchCounter struct {
	grpc.ClientStream
	cl *Client
}

func (w watchCounter) RecvMsg(m any) error {
	err := w.ClientStream.RecvMsg(m)
	if r, ok := m.(*etcdserverpb.WatchResponse); ok && err == nil && len(r.Events) > 0 && !w.cl.wired.Load() {
		w.cl.wakes.Add(1)
	}
	return err
}

// LeaseGrants lists, in order, every lease the server granted through this
// client.
func (cl *Client) LeaseGrants() []LeaseGrant {
	cl.grantsMu.Lock()
	defer cl.grantsMu.Unlock()
	return slices.Clone(cl.grants)
}

// SetLease records the lease the client's lock session uses, so that faults
// such as lease expiry can find it. Zero clears it.
func (cl *Client) SetLease(id clientv3.LeaseID) { cl.lease.Store(int64(id)) }

// Lease returns the lease recorded with SetLease, or zero.
func (cl *Client) Lease() clientv3.LeaseID { return clientv3.LeaseID(cl.lease.Load()) }

// Cut stops all traffic between the client and its member, both ways, the
// way a network partition does: requests and keep-alives wait, nothing
// errors. Heal undoes it.
func (cl *Client) Cut() { cl.proxy.Cut() }

// Heal restores the client's link, and disarms CutAnswersAtWrite; held
// traffic is delivered.
func (cl *Client) Heal() {
	cl.atWrite.Store(false)
	cl.atRenew.Store(false)
	cl.proxy.Heal()
}

// CutAnswers holds the answers of the client's member while its requests
// still reach it (a one-way link failure); Heal undoes it.
func (cl *Client) CutAnswers() { cl.proxy.CutAnswers() }

// CutAnswersAtWrite arms the client's link to fail one way at the client's
// next write (a request that may change keys, grpcwire.IsWrite): answers
// are held, as CutAnswers holds them, from just before that request is
// forwarded, so the write reaches the member and takes effect while its
// answer cannot come back. What the client sends before it (a lease's
// grant, reads, renewals) is answered as usual. The write is seen by the
// lab's client interceptor, or off the wire for a program that is not the
// lab's (ReadWire; never on TLS). Heal disarms it.
func (cl *Client) CutAnswersAtWrite() { cl.atWrite.Store(true) }

// CutAnswersAtKeepAlive arms the client's link to fail one way at the
// client's next keep-alive: answers are held, as CutAnswers holds them,
// from just before that keep-alive is forwarded, so it reaches the member
// and renews the lease while its answer — and every answer after it —
// waits. A renewer that takes a keep-alive unanswered for a while for a
// lost lease is then met on every run, whenever it renews. Seen by the
// lab's client interceptor, or off the wire (ReadWire). Heal disarms it.
func (cl *Client) CutAnswersAtKeepAlive() { cl.atRenew.Store(true) }

// AnswersHeld reports whether the answers of the client's member are held
// now (Cut, CutAnswers, or an armed cut that has fired).
func (cl *Client) AnswersHeld() bool { return cl.proxy.AnswersHeld() }

// renewing is called before each keep-alive the client sends is forwarded.
func (cl *Client) renewing() {
	if cl.atRenew.CompareAndSwap(true, false) {
		cl.proxy.CutAnswers()
	}
}

// sending is called with each request's method before it is forwarded.
func (cl *Client) sending(method string) {
	if grpcwire.IsWrite(method) && cl.atWrite.CompareAndSwap(true, false) {
		cl.proxy.CutAnswers()
	}
}

// Sever closes the client's connections through its link, dropping whatever
// the link holds; the client reconnects as after any broken connection.
func (cl *Client) Sever() { cl.proxy.Sever() }

// IsCut reports whether the client's link is cut.
func (cl *Client) IsCut() bool { return cl.proxy.IsCut() }

// SetDelay delays all of the client's traffic by d in each direction; zero
// removes the delay.
func (cl *Client) SetDelay(d time.Duration) { cl.proxy.SetDelay(d) }

func (cl *Client) close() error {
	cl.pause.Resume(nil)
	err := cl.Etcd().Close()
	if cerr := cl.proxy.Close(); err == nil {
		err = cerr
	}
	if err == context.Canceled {
		err = nil
	}
	return err
}

// hostOf strips the scheme from an endpoint URL: "https://a:2379" → "a:2379".
func hostOf(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		return u.Host
	}
	return endpoint
}

// hostname is the host part of an endpoint, without port.
func hostname(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		return u.Hostname()
	}
	u, err := url.Parse("//" + endpoint)
	if err != nil {
		return endpoint
	}
	return u.Hostname()
}
