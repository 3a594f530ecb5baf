package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.uber.org/zap"
)

// External describes a cluster the lab does not own: a user's etcd, reached
// by its client endpoints. Lab clients still reach it through proxies of the
// lab's, so client faults (cut, delay, pause, lease expiry) work; member
// faults answer ErrExternal.
type External struct {
	// Endpoints are the members' client URLs ("https://10.0.0.1:2379"); a
	// bare host:port means http. Members are named m1…mN in this order.
	Endpoints []string
	// CertFile and KeyFile are the client certificate, CAFile the CA that
	// signed the servers' certificates; any one of them turns TLS on.
	CertFile, KeyFile, CAFile string
	// Username and Password authenticate every client, if set.
	Username, Password string
	// Logger receives the clients' logs; nil silences them.
	Logger *zap.Logger

	tls *tls.Config
}

// Connect reaches an existing cluster and checks that every endpoint answers
// before ctx ends (each within a few seconds); an endpoint that refuses the
// connection or the TLS handshake fails at once, with the reason. Close
// closes only what the lab opened.
func Connect(ctx context.Context, x External) (_ *Cluster, err error) {
	if len(x.Endpoints) == 0 {
		return nil, errors.New("cluster: no endpoints given")
	}
	if x.CertFile != "" || x.KeyFile != "" || x.CAFile != "" {
		info := transport.TLSInfo{CertFile: x.CertFile, KeyFile: x.KeyFile, TrustedCAFile: x.CAFile}
		if x.tls, err = info.ClientConfig(); err != nil {
			return nil, fmt.Errorf("cluster: TLS files: %w", err)
		}
	}
	// Timings only steer how often waits look again; etcd's defaults.
	c := &Cluster{
		cfg:      Config{Members: len(x.Endpoints), TickMs: 100, ElectionMs: 1000, Logger: x.Logger},
		external: &x,
		clients:  map[string]*Client{},
	}
	if c.cfg.Logger == nil {
		c.cfg.Logger = zap.NewNop()
	}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	for i, ep := range x.Endpoints {
		u, err := parseEndpoint(ep)
		if err != nil {
			return nil, err
		}
		c.members = append(c.members, &member{name: fmt.Sprintf("m%d", i+1), extEndpoint: u})
	}
	if c.admin, err = c.newAdmin(c.Endpoints()); err != nil {
		return nil, err
	}
	for _, m := range c.members {
		if m.admin, err = c.newAdmin([]string{m.extEndpoint}); err != nil {
			return nil, err
		}
		// gRPC would wait for a connection until the deadline and then say
		// only that; a direct connection attempt fails at once and says why
		// (refused, a certificate not trusted, a client certificate needed).
		err := probe(ctx, m.extEndpoint, x.tls)
		if err == nil {
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err = m.admin.Status(sctx, m.extEndpoint)
			cancel()
		}
		if err != nil {
			return nil, fmt.Errorf("cluster: cannot reach etcd at %s: %w", m.extEndpoint, err)
		}
	}
	return c, nil
}

// parseEndpoint checks an endpoint and gives it a scheme.
func parseEndpoint(ep string) (string, error) {
	if !strings.Contains(ep, "://") {
		ep = "http://" + ep
	}
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" || u.Port() == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("cluster: endpoint %q: want http(s)://host:port", ep)
	}
	return u.Scheme + "://" + u.Host, nil
}

// probe connects to endpoint the way a client would (TCP, then TLS for
// https) and returns why that fails, or nil if it does not.
func probe(ctx context.Context, endpoint string, cfg *tls.Config) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	host := hostOf(endpoint)
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
	if err != nil {
		return err
	}
	defer conn.Close()
	if !strings.HasPrefix(endpoint, "https://") {
		return nil
	}
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = hostname(endpoint)
	}
	cfg.NextProtos = []string{"h2"}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return err
	}
	// With TLS 1.3 a server that rejects the client's certificate says so
	// only after the handshake, in an alert the first read receives.
	tc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	var b [1]byte
	if _, err := tc.Read(b[:]); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil // the server is waiting for the client: it accepted us
		}
		return err
	}
	return nil
}
