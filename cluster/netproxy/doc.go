// Package netproxy is a loopback TCP proxy that the lab can cut, delay and
// sever: the one piece of network between a client or a peer and an etcd member.
//
// It exists instead of go.etcd.io/etcd/pkg/v3/proxy for four reasons, each
// seen in that package's source (v3.7.3): it listens on every interface rather
// than loopback; it cannot bind port 0, so two processes can race between
// "pick a free port" and "listen"; when the upstream dial fails it keeps the
// accepted connection open, so a client of a killed member hangs until gRPC's
// connect timeout instead of reconnecting as soon as the member is back; and its
// blackhole drops bytes mid-stream, which corrupts HTTP/2 framing. Here every
// listener is bound by the kernel on 127.0.0.1:0, a failed dial closes the
// inbound connection at once (the client sees what "connection refused" would
// tell it), and a cut holds bytes the way a partitioned TCP connection does.
package netproxy
