package httpwire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/locklab/locklab/cluster/grpcwire"
)

// maxBody bounds what is read of one request's or answer's body to decode
// it; a larger body is skipped unread (no message of etcd's that matters
// here is near it).
const maxBody = 1 << 22

// maxHeader bounds what is read of a request's line and headers: past it
// (bytes that only began like a request) the reader stops.
const maxHeader = 1 << 16

// maxInFlight bounds the requests read whose answers have not begun; past
// it (a stream that is not what it seems) the reader stops.
const maxInFlight = 1024

// methods maps the gateway's paths, after its version prefix, to the gRPC
// methods they call.
var methods = map[string]string{
	"kv/range":               "/etcdserverpb.KV/Range",
	"kv/put":                 "/etcdserverpb.KV/Put",
	"kv/deleterange":         "/etcdserverpb.KV/DeleteRange",
	"kv/txn":                 "/etcdserverpb.KV/Txn",
	"kv/compaction":          "/etcdserverpb.KV/Compact",
	"lease/grant":            leaseGrant,
	"lease/revoke":           leaseRevoke,
	"kv/lease/revoke":        leaseRevoke,
	"lease/keepalive":        leaseKeepAlive,
	"lease/timetolive":       "/etcdserverpb.Lease/LeaseTimeToLive",
	"kv/lease/timetolive":    "/etcdserverpb.Lease/LeaseTimeToLive",
	"lease/leases":           "/etcdserverpb.Lease/LeaseLeases",
	"kv/lease/leases":        "/etcdserverpb.Lease/LeaseLeases",
	"watch":                  watch,
	"lock/lock":              "/v3lockpb.Lock/Lock",
	"lock/unlock":            "/v3lockpb.Lock/Unlock",
	"election/campaign":      "/v3electionpb.Election/Campaign",
	"election/proclaim":      "/v3electionpb.Election/Proclaim",
	"election/leader":        "/v3electionpb.Election/Leader",
	"election/observe":       observe,
	"election/resign":        "/v3electionpb.Election/Resign",
	"maintenance/status":     "/etcdserverpb.Maintenance/Status",
	"cluster/member/list":    "/etcdserverpb.Cluster/MemberList",
	"maintenance/snapshot":   snapshot,
	"auth/authenticate":      "/etcdserverpb.Auth/Authenticate",
	"maintenance/alarm":      "/etcdserverpb.Maintenance/Alarm",
	"maintenance/hash":       "/etcdserverpb.Maintenance/Hash",
	"maintenance/defragment": "/etcdserverpb.Maintenance/Defragment",
}

const (
	leaseGrant     = "/etcdserverpb.Lease/LeaseGrant"
	leaseKeepAlive = "/etcdserverpb.Lease/LeaseKeepAlive"
	leaseRevoke    = "/etcdserverpb.Lease/LeaseRevoke"
	watch          = "/etcdserverpb.Watch/Watch"
	observe        = "/v3electionpb.Election/Observe"
	snapshot       = "/etcdserverpb.Maintenance/Snapshot"
)

// Method is the gRPC method a gateway path calls ("/v3/kv/txn" →
// "/etcdserverpb.KV/Txn"), or "" for a path that is not the gateway's.
func Method(path string) string {
	for _, v := range []string{"/v3/", "/v3beta/", "/v3alpha/"} {
		if rest, ok := strings.CutPrefix(path, v); ok {
			return methods[strings.Trim(rest, "/")]
		}
	}
	return ""
}

// streams reports whether method is a stream: its answer is a sequence
// of messages, and opening it is no request.
func streams(method string) bool {
	return method == watch || method == leaseKeepAlive || method == observe || method == snapshot
}

// LooksLike reports whether p, the first bytes a client sent on a
// connection, may start an HTTP/1 request: an upper-case method, a space
// and a path.
func LooksLike(p []byte) bool {
	verb, _, ok := bytes.Cut(p, []byte(" "))
	if !ok {
		return len(p) > 0 && len(p) < 8 && upper(p)
	}
	return len(verb) > 0 && len(verb) < 8 && upper(verb)
}

func upper(p []byte) bool {
	for _, b := range p {
		if b < 'A' || b > 'Z' {
			return false
		}
	}
	return true
}

// asked is a request read, for its answer: its method, and for a revoke
// the lease it names.
type asked struct {
	method string
	lease  int64
}

// Conn reads one connection. Request and Answer are fed the bytes of each
// direction in order, as read, and return once the reader has taken them
// in (the hooks for what they complete have been called); each may be
// called from its own goroutine. Feeding nil ends a direction: call it for
// both once the connection is closed, or the reader's goroutines stay.
type Conn struct {
	hooks grpcwire.Hooks
	up    *feed
	down  *feed
	asked chan asked // each request, in order, for its answer
}

// NewConn returns a reader for one connection that reports what it reads
// to hooks. It runs a goroutine for each direction until that direction is
// fed nil.
func NewConn(hooks grpcwire.Hooks) *Conn {
	c := &Conn{hooks: hooks, up: newFeed(), down: newFeed(), asked: make(chan asked, maxInFlight)}
	go c.up.run(c.requests)
	go c.down.run(c.answers)
	return c
}

// Request takes bytes the client sent.
func (c *Conn) Request(p []byte) { c.up.put(p) }

// Answer takes bytes the server sent.
func (c *Conn) Answer(p []byte) { c.down.put(p) }

// requests reads the client's requests until the stream ends or is not
// HTTP/1.
func (c *Conn) requests(r *bufio.Reader) error {
	defer close(c.asked)
	for {
		c.up.limit(maxHeader)
		req, err := http.ReadRequest(r)
		c.up.limit(-1)
		if err != nil {
			return err
		}
		method := Method(req.URL.Path)
		if method != "" && !streams(method) && c.hooks.Request != nil {
			c.hooks.Request(method)
		}
		a := asked{method: method}
		if method == leaseRevoke { // the lease is in its body, whole before its answer
			if err := messages(req.Body, func(m message) { a.lease = int64(m.ID) }); err != nil {
				return err
			}
			if a.lease != 0 && c.hooks.Revoking != nil {
				c.hooks.Revoking(a.lease)
			}
		}
		select {
		case c.asked <- a:
		default:
			return errors.New("too many requests unanswered")
		}
		if method == leaseKeepAlive && c.hooks.KeepAlive != nil {
			err = messages(req.Body, func(m message) { c.hooks.KeepAlive(int64(m.ID)) })
		} else {
			_, err = io.Copy(io.Discard, req.Body)
		}
		if err != nil {
			return err
		}
	}
}

// answers reads the server's answers, each to the next request asked.
func (c *Conn) answers(r *bufio.Reader) error {
	for {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return err
		}
		if resp.StatusCode < 200 { // 100 Continue: the answer is still to come
			continue
		}
		// The request was read before its last bytes went on to the
		// server, so an answer that finds none asked answers nothing read:
		// the server's answer to bytes that were not a request.
		var a asked
		select {
		case m, ok := <-c.asked:
			if !ok {
				return errors.New("an answer after the requests stopped")
			}
			a = m
		default:
			return errors.New("an answer to no request")
		}
		method := a.method
		if resp.StatusCode == http.StatusOK && method != "" && !streams(method) && c.hooks.Answer != nil {
			c.hooks.Answer()
		}
		if method == leaseRevoke && a.lease != 0 && c.hooks.Revoke != nil {
			c.hooks.Revoke(a.lease, resp.StatusCode == http.StatusOK)
		}
		if err := c.answer(method, resp); err != nil {
			return err
		}
	}
}

// answer reads one answer's body, and reports what it says.
func (c *Conn) answer(method string, resp *http.Response) error {
	defer resp.Body.Close()
	ok := resp.StatusCode == http.StatusOK
	var on func(message)
	switch {
	case ok && method == leaseGrant && c.hooks.Grant != nil:
		on = func(m message) {
			if m.ID != 0 && m.Error == "" {
				c.hooks.Grant(int64(m.ID), int64(m.TTL))
			}
		}
	case ok && method == leaseKeepAlive && c.hooks.KeptAlive != nil:
		on = func(m message) {
			if r := m.Result; r != nil && r.ID != 0 {
				c.hooks.KeptAlive(int64(r.ID), int64(r.TTL))
			}
		}
	case ok && method == watch && c.hooks.Wake != nil:
		on = func(m message) {
			if r := m.Result; r != nil && len(r.Events) > 0 {
				c.hooks.Wake()
			}
		}
	}
	if on == nil {
		_, err := io.Copy(io.Discard, resp.Body)
		return err
	}
	return messages(resp.Body, on)
}

// message is what is read of a gateway's JSON message: a unary answer's
// fields, or a stream's message wrapped in "result".
type message struct {
	ID     number   `json:"ID"`
	TTL    number   `json:"TTL"`
	Error  string   `json:"error"`
	Events []any    `json:"events"`
	Result *message `json:"result"`
}

// messages calls on for each JSON message in body, which may hold one or
// a stream of them; a body that is not JSON is read to its end unread.
func messages(body io.Reader, on func(message)) error {
	lr := &io.LimitedReader{R: body, N: maxBody}
	dec := json.NewDecoder(lr)
	for {
		var m message
		err := dec.Decode(&m)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			_, err = io.Copy(io.Discard, body) // what it is does not matter: the framing goes on
			return err
		}
		on(m)
		lr.N = maxBody // a stream's limit is per message
	}
}

// number is an int64 as the gateway writes it (a JSON string) or a client
// may (a JSON number).
type number int64

func (n *number) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(strings.Trim(string(b), `"`), 10, 64)
	if err != nil {
		return nil // not a number: nothing to learn from it
	}
	*n = number(v)
	return nil
}

// RequestOf reads p, one read of what a client sent, as the start of an
// HTTP/1 request to etcd's gateway: the request's method (as Method names
// it), and whether p opens a request that is no stream. A request's line
// is the first thing a client writes of it, so a read that opens one
// starts with it.
func RequestOf(p []byte) (method string, ok bool) {
	line, _, _ := bytes.Cut(p, []byte("\r\n"))
	verb, rest, found := bytes.Cut(line, []byte(" "))
	if !found || len(verb) == 0 || len(verb) >= 8 || !upper(verb) {
		return "", false
	}
	target, _, _ := bytes.Cut(rest, []byte(" "))
	path, _, _ := strings.Cut(string(target), "?")
	method = Method(path)
	return method, method != "" && !streams(method)
}
