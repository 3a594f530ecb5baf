package grpcwire

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/proto"
)

// The methods read: the answers of the first two (new leases, watch
// events), both directions of the third (keep-alives), the requests of the
// fourth (revokes).
const (
	leaseGrant     = "/etcdserverpb.Lease/LeaseGrant"
	watch          = "/etcdserverpb.Watch/Watch"
	leaseKeepAlive = "/etcdserverpb.Lease/LeaseKeepAlive"
	leaseRevoke    = "/etcdserverpb.Lease/LeaseRevoke"
)

// writes are etcd's methods that may change keys: the KV writes, and the
// lock and election services' (which a client in another language may call
// instead of writing keys itself).
var writes = []string{"/etcdserverpb.KV/Put", "/etcdserverpb.KV/Txn", "/etcdserverpb.KV/DeleteRange",
	"/v3lockpb.Lock/Lock", "/v3lockpb.Lock/Unlock", "/v3electionpb.Election/Campaign",
	"/v3electionpb.Election/Proclaim", "/v3electionpb.Election/Resign"}

// IsWrite reports whether method (a gRPC method path, as Hooks.Request
// gets it) may change the cluster's keys.
func IsWrite(method string) bool { return slices.Contains(writes, method) }

// streaming are etcd's methods that are streams, not requests.
var streaming = []string{watch, leaseKeepAlive, "/etcdserverpb.Maintenance/Snapshot", "/v3electionpb.Election/Observe"}

// Hooks are what a Conn reports, as it reads it; a nil hook is not called.
type Hooks struct {
	// Grant is a lease the server granted, with the TTL it granted, in
	// seconds (etcd may raise the TTL asked for to its minimum).
	Grant func(id, ttl int64)
	// Request is a unary request the client sent (a stream's opening is
	// not one), by its gRPC method ("/etcdserverpb.KV/Txn"). It is called
	// before the bytes that carry it are forwarded.
	Request func(method string)
	// Wake is a watch response that carried events.
	Wake func()
	// KeepAlive is a keep-alive the client sent for lease id.
	KeepAlive func(id int64)
	// KeptAlive is the server's answer to a keep-alive for lease id, with
	// the TTL it says the lease has left (zero or less: the lease is gone).
	KeptAlive func(id, ttl int64)
	// Revoking is a revoke of lease id the client sent (called before the
	// bytes that carry it are forwarded), and Revoke the server's answer
	// to it: ok if it revoked the lease — which then lived until its own
	// client ended it, neither a lapse nor the server's doing — false if
	// it refused (the lease was gone already) or the stream was reset.
	// Revoke follows each Revoking once, unless the connection ends first.
	Revoking func(id int64)
	Revoke   func(id int64, ok bool)
	// Answer is a unary request the server answered without an error
	// (its trailers say grpc-status 0): proof it took effect, or was
	// refused as a lock's Txn may be.
	Answer func()
}

// maxBuffered bounds what one direction keeps of a frame not yet complete;
// past it (a stream that is not what it seems) the reader stops.
const maxBuffered = 1 << 24

// Conn reads one connection. Request and Answer are fed the bytes of each
// direction in order, as read; each may be called from its own goroutine.
type Conn struct {
	hooks Hooks

	mu      sync.Mutex
	streams map[uint32]string // streams read (LeaseGrant, Watch, LeaseKeepAlive, LeaseRevoke) → method, until done
	revokes map[uint32]int64  // revokes asked → their lease, until answered
	unary   map[uint32]bool   // unary requests awaiting their answer's status

	up, down direction
}

// direction is one side's frame reader.
type direction struct {
	buf     []byte
	preface bool // the client preface is still to come (requests only)
	dead    bool
	dec     *hpack.Decoder
	block   []byte            // the header block being gathered, until END_HEADERS
	blockOf uint32            // its stream
	data    map[uint32][]byte // gRPC bytes of a stream read, until a whole message
}

// NewConn returns a reader for one connection that reports what it reads
// to hooks.
func NewConn(hooks Hooks) *Conn {
	c := &Conn{hooks: hooks, streams: map[uint32]string{}, revokes: map[uint32]int64{}, unary: map[uint32]bool{}}
	c.up = direction{preface: true, dec: hpack.NewDecoder(4096, nil), data: map[uint32][]byte{}}
	c.down = direction{dec: hpack.NewDecoder(4096, nil), data: map[uint32][]byte{}}
	return c
}

// Request takes bytes the client sent.
func (c *Conn) Request(p []byte) { c.feed(&c.up, p, true) }

// Answer takes bytes the server sent.
func (c *Conn) Answer(p []byte) { c.feed(&c.down, p, false) }

func (c *Conn) feed(d *direction, p []byte, request bool) {
	if d.dead {
		return
	}
	d.buf = append(d.buf, p...)
	if d.preface {
		if len(d.buf) < len(http2.ClientPreface) {
			if !bytes.HasPrefix([]byte(http2.ClientPreface), d.buf) {
				d.stop()
			}
			return
		}
		if !bytes.HasPrefix(d.buf, []byte(http2.ClientPreface)) {
			d.stop()
			return
		}
		d.buf = d.buf[len(http2.ClientPreface):]
		d.preface = false
	}
	for len(d.buf) >= 9 {
		length := int(d.buf[0])<<16 | int(d.buf[1])<<8 | int(d.buf[2])
		if 9+length > len(d.buf) {
			break
		}
		typ, flags := http2.FrameType(d.buf[3]), http2.Flags(d.buf[4])
		stream := binary.BigEndian.Uint32(d.buf[5:9]) & (1<<31 - 1)
		c.frame(d, request, typ, flags, stream, d.buf[9:9+length])
		if d.dead { // the frame stopped the reader
			return
		}
		d.buf = d.buf[9+length:]
	}
	if len(d.buf) > maxBuffered {
		d.stop()
	}
	// Keep the buffer from growing without bound behind a slice window.
	if cap(d.buf) > 64*1024 && len(d.buf) < cap(d.buf)/4 {
		d.buf = append([]byte(nil), d.buf...)
	}
}

func (d *direction) stop() {
	d.dead, d.buf, d.block, d.data = true, nil, nil, nil
}

// frame handles one whole frame.
func (c *Conn) frame(d *direction, request bool, typ http2.FrameType, flags http2.Flags, stream uint32, payload []byte) {
	switch typ {
	case http2.FrameHeaders:
		payload = unpad(flags, payload)
		if flags.Has(http2.FlagHeadersPriority) && len(payload) >= 5 {
			payload = payload[5:]
		}
		d.block, d.blockOf = append(d.block[:0], payload...), stream
		if flags.Has(http2.FlagHeadersEndHeaders) {
			c.headers(d, request)
		}
	case http2.FrameContinuation:
		if stream != d.blockOf {
			d.stop()
			return
		}
		d.block = append(d.block, payload...)
		if flags.Has(http2.FlagContinuationEndHeaders) {
			c.headers(d, request)
		}
	case http2.FrameData:
		c.mu.Lock()
		method := c.streams[stream]
		c.mu.Unlock()
		// Keep-alives both ways, a revoke's request, the others' answers.
		read := method == leaseKeepAlive || request == (method == leaseRevoke)
		if method == "" || !read {
			return // a stream not read, or its direction not read
		}
		msg := append(d.data[stream], unpad(flags, payload)...)
		// Every whole gRPC message: 1 byte compressed, 4 bytes length.
		for len(msg) >= 5 && len(msg) >= 5+int(binary.BigEndian.Uint32(msg[1:5])) {
			n := int(binary.BigEndian.Uint32(msg[1:5]))
			body, compressed := msg[5:5+n], msg[0] != 0 // etcd's clients do not compress
			msg = msg[5+n:]
			if method == leaseGrant || method == leaseRevoke {
				msg = nil
				c.done(stream) // one answer, or one request
			}
			if !compressed {
				c.message(method, stream, body, request)
			}
		}
		switch {
		case len(msg) > maxBuffered: // no message of etcd's is that large
			d.stop()
		case len(msg) > 0:
			d.data[stream] = msg
		default:
			delete(d.data, stream)
		}
	case http2.FrameRSTStream:
		delete(d.data, stream)
		c.done(stream)
		c.mu.Lock()
		delete(c.unary, stream)
		revoked, isRevoke := c.revokes[stream]
		delete(c.revokes, stream)
		c.mu.Unlock()
		if isRevoke && c.hooks.Revoke != nil {
			c.hooks.Revoke(revoked, false)
		}
	}
}

// headers decodes the gathered header block; on requests it counts them,
// and notes the streams to read.
func (c *Conn) headers(d *direction, request bool) {
	var path, status string
	d.dec.SetEmitFunc(func(f hpack.HeaderField) {
		switch f.Name {
		case ":path":
			path = f.Value
		case "grpc-status":
			status = f.Value
		}
	})
	_, err := d.dec.Write(d.block)
	if err == nil {
		err = d.dec.Close()
	}
	d.block = d.block[:0]
	if err != nil {
		d.stop() // the table is lost: nothing after this can be read
		return
	}
	if !request {
		c.answered(d.blockOf, status)
		return
	}
	if path == "" {
		return
	}
	if !slices.Contains(streaming, path) {
		if c.hooks.Request != nil {
			c.hooks.Request(path)
		}
		c.mu.Lock()
		c.unary[d.blockOf] = true
		c.mu.Unlock()
	}
	if path == leaseGrant || path == watch || path == leaseKeepAlive || path == leaseRevoke {
		c.mu.Lock()
		c.streams[d.blockOf] = path
		c.mu.Unlock()
	}
}

// message reads one whole message of method: an answer, or for
// LeaseKeepAlive a request too, or LeaseRevoke's request.
func (c *Conn) message(method string, stream uint32, body []byte, request bool) {
	switch method {
	case leaseRevoke:
		var req etcdserverpb.LeaseRevokeRequest
		if proto.Unmarshal(body, &req) == nil && req.ID != 0 {
			c.mu.Lock()
			c.revokes[stream] = req.ID
			c.mu.Unlock()
			if c.hooks.Revoking != nil {
				c.hooks.Revoking(req.ID)
			}
		}
	case leaseGrant:
		var resp etcdserverpb.LeaseGrantResponse
		if proto.Unmarshal(body, &resp) == nil && resp.ID != 0 && resp.Error == "" && c.hooks.Grant != nil {
			c.hooks.Grant(resp.ID, resp.TTL)
		}
	case watch:
		var resp etcdserverpb.WatchResponse
		if proto.Unmarshal(body, &resp) == nil && len(resp.Events) > 0 && c.hooks.Wake != nil {
			c.hooks.Wake()
		}
	case leaseKeepAlive:
		if !request {
			var resp etcdserverpb.LeaseKeepAliveResponse
			if proto.Unmarshal(body, &resp) == nil && resp.ID != 0 && c.hooks.KeptAlive != nil {
				c.hooks.KeptAlive(resp.ID, resp.TTL)
			}
			return
		}
		var req etcdserverpb.LeaseKeepAliveRequest
		if proto.Unmarshal(body, &req) == nil && req.ID != 0 && c.hooks.KeepAlive != nil {
			c.hooks.KeepAlive(req.ID)
		}
	}
}

// answered notes the status a unary request's answer ended with, if these
// headers carry it (its trailers do): a status of 0 is an answer.
func (c *Conn) answered(stream uint32, status string) {
	if status == "" {
		return
	}
	c.mu.Lock()
	unary := c.unary[stream]
	delete(c.unary, stream)
	revoked, isRevoke := c.revokes[stream]
	delete(c.revokes, stream)
	c.mu.Unlock()
	if unary && status == "0" && c.hooks.Answer != nil {
		c.hooks.Answer()
	}
	if isRevoke && c.hooks.Revoke != nil {
		c.hooks.Revoke(revoked, status == "0")
	}
}

func (c *Conn) done(stream uint32) {
	c.mu.Lock()
	delete(c.streams, stream)
	c.mu.Unlock()
}

// unpad strips a frame's padding.
func unpad(flags http2.Flags, p []byte) []byte {
	if !flags.Has(http2.FlagDataPadded) || len(p) == 0 { // the same bit for HEADERS
		return p
	}
	pad := int(p[0])
	if 1+pad > len(p) {
		return nil
	}
	return p[1 : len(p)-pad]
}
