package cluster

import (
	"bytes"
	"sync"

	"golang.org/x/net/http2"

	"github.com/locklab/locklab/cluster/grpcwire"
	"github.com/locklab/locklab/cluster/httpwire"
)

// wireReader reads one connection through a client's link in whichever
// protocol its client speaks: gRPC (HTTP/2, package grpcwire) or etcd's
// HTTP/JSON gateway (HTTP/1.1, package httpwire), told apart by the first
// bytes the client sends. Anything else (TLS) is not read.
type wireReader struct {
	hooks grpcwire.Hooks

	mu       sync.Mutex
	chosen   bool
	req, ans func([]byte) // the chosen reader's; nil for none
	ansEnded bool         // the server's direction ended before the choice
}

// Request takes bytes the client sent (nil: its direction ended).
func (w *wireReader) Request(p []byte) {
	w.mu.Lock()
	if !w.chosen && len(p) > 0 {
		w.choose(p)
	}
	req := w.req
	w.mu.Unlock()
	if req != nil {
		req(p)
	}
}

// Answer takes bytes the server sent (nil: its direction ended).
func (w *wireReader) Answer(p []byte) {
	w.mu.Lock()
	ans := w.ans
	if !w.chosen && p == nil {
		w.ansEnded = true
	}
	w.mu.Unlock()
	if ans != nil {
		ans(p)
	}
}

// speaksGRPC reports whether p, the first bytes a client sent on a
// connection, may start HTTP/2's client preface (gRPC); else
// httpwire.LooksLike says whether they may start an HTTP/1 request.
func speaksGRPC(p []byte) bool {
	n := min(len(p), len(http2.ClientPreface))
	return bytes.Equal(p[:n], []byte(http2.ClientPreface)[:n])
}

// choose picks the reader for a connection whose client first sent p.
func (w *wireReader) choose(p []byte) {
	w.chosen = true
	switch {
	case speaksGRPC(p):
		c := grpcwire.NewConn(w.hooks)
		w.req, w.ans = c.Request, c.Answer
	case httpwire.LooksLike(p):
		c := httpwire.NewConn(w.hooks)
		w.req, w.ans = c.Request, c.Answer
		if w.ansEnded {
			c.Answer(nil)
		}
	}
}

// SpotRequests returns a reader of one client connection's requests, in
// either protocol, fed each read of what the client sends before it is
// forwarded: it reports whether that read opens a request (a unary gRPC
// call, or a gateway request that is no stream) whose method keep accepts
// (nil: any). A connection in neither protocol opens none.
func SpotRequests(keep func(method string) bool) func([]byte) bool {
	var (
		chosen bool
		grpc   *grpcwire.Conn
		http   bool
		seen   bool // set by grpc's hook, within its Request
	)
	wanted := func(method string) bool { return keep == nil || keep(method) }
	return func(p []byte) bool {
		if len(p) == 0 {
			return false
		}
		if !chosen {
			chosen = true
			switch {
			case speaksGRPC(p):
				grpc = grpcwire.NewConn(grpcwire.Hooks{Request: func(method string) { seen = seen || wanted(method) }})
			case httpwire.LooksLike(p):
				http = true
			}
		}
		switch {
		case grpc != nil:
			seen = false
			grpc.Request(p)
			return seen
		case http:
			method, ok := httpwire.RequestOf(p)
			return ok && wanted(method)
		}
		return false
	}
}
