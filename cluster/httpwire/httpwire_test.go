package httpwire_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/cluster/grpcwire"
	"github.com/locklab/locklab/cluster/httpwire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// seen is what a Conn reported.
type seen struct {
	mu                sync.Mutex
	grants, kept      []string
	requests, renewed []string
	revoking, revoked []string
	answers, wakes    int
}

func (s *seen) hooks() grpcwire.Hooks {
	add := func(to *[]string, v string) { s.mu.Lock(); *to = append(*to, v); s.mu.Unlock() }
	return grpcwire.Hooks{
		Grant:     func(id, ttl int64) { add(&s.grants, fmt.Sprintf("%x/%d", id, ttl)) },
		Request:   func(m string) { add(&s.requests, m) },
		KeepAlive: func(id int64) { add(&s.renewed, fmt.Sprintf("%x", id)) },
		KeptAlive: func(id, ttl int64) { add(&s.kept, fmt.Sprintf("%x/%d", id, ttl)) },
		Revoking:  func(id int64) { add(&s.revoking, fmt.Sprintf("%x", id)) },
		Revoke: func(id int64, ok bool) {
			if ok {
				add(&s.revoked, fmt.Sprintf("%x", id))
			}
		},
		Answer: func() { s.mu.Lock(); s.answers++; s.mu.Unlock() },
		Wake:   func() { s.mu.Lock(); s.wakes++; s.mu.Unlock() },
	}
}

func post(path, body string) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
}

func ok(body string) string {
	return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// chunked is a streamed answer, one chunk per message, ended.
func chunked(msgs ...string) string {
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
	for _, m := range msgs {
		fmt.Fprintf(&b, "%x\r\n%s\n\r\n", len(m)+1, m)
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

// A session as etcd3gw has it with the gateway — a grant, a Txn, a
// keep-alive, a refused revoke, a revoke that took effect, a watch woken
// once — fed in pieces of every size: each fact is reported once, and by
// the time a piece is taken in, what it completed has been reported.
func TestAGatewaySessionIsRead(t *testing.T) {
	up := post("/v3/lease/grant", `{"TTL": 2, "ID": 0}`) +
		post("/v3/kv/txn", `{"compare":[]}`) +
		post("/v3/lease/keepalive", `{"ID": 3000}`) +
		post("/v3/kv/lease/revoke", `{"ID": 1}`) +
		post("/v3/lease/revoke", `{"ID": "3000"}`) +
		post("/v3/watch", `{"create_request":{"key":"aw=="}}`)
	down := ok(`{"header":{"revision":"5"},"ID":"3000","TTL":"2"}`) +
		ok(`{"header":{},"succeeded":true}`) +
		chunked(`{"result":{"header":{},"ID":"3000","TTL":"2"}}`) +
		"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}" +
		ok(`{"header":{}}`) +
		chunked(`{"result":{"header":{},"created":true}}`, `{"result":{"header":{},"events":[{"kv":{}}]}}`)
	for _, size := range []int{1, 7, 64, len(up) + len(down)} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			var s seen
			c := httpwire.NewConn(s.hooks())
			for i := 0; i < len(up); i += size {
				c.Request([]byte(up[i:min(i+size, len(up))]))
			}
			// The first request is reported before its last byte is taken in.
			for i := 0; i < len(down); i += size {
				c.Answer([]byte(down[i:min(i+size, len(down))]))
			}
			c.Request(nil)
			c.Answer(nil)
			s.mu.Lock()
			defer s.mu.Unlock()
			assert.Equal(t, []string{"/etcdserverpb.Lease/LeaseGrant", "/etcdserverpb.KV/Txn", "/etcdserverpb.Lease/LeaseRevoke",
				"/etcdserverpb.Lease/LeaseRevoke"}, s.requests, "streams are no requests")
			assert.Equal(t, []string{"1", "bb8"}, s.revoking, "both revokes, as they were asked")
			assert.Equal(t, []string{"bb8"}, s.revoked, "the revoke answered 200; a refused one revoked nothing")
			assert.Equal(t, []string{"bb8/2"}, s.grants)
			assert.Equal(t, []string{"bb8"}, s.renewed)
			assert.Equal(t, []string{"bb8/2"}, s.kept)
			assert.Equal(t, 3, s.answers, "the grant, the Txn and a revoke; a 404 is no answer")
			assert.Equal(t, 1, s.wakes, "the watch's created message carries no event")
		})
	}
}

// What a request completes is reported before the bytes that complete it
// are taken in: a link that must act at a client's next write (lose its
// answer) acts before that write is forwarded.
func TestARequestIsReportedBeforeItsBytesGoOn(t *testing.T) {
	var s seen
	c := httpwire.NewConn(s.hooks())
	defer c.Answer(nil)
	defer c.Request(nil)
	c.Request([]byte(post("/v3/kv/put", `{}`)))
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Equal(t, []string{"/etcdserverpb.KV/Put"}, s.requests)
}

// Bytes that are not HTTP/1 stop the reader: nothing is reported, the
// bytes still go on, and its goroutines end when the connection does.
func TestNotHTTP1IsNotRead(t *testing.T) {
	var s seen
	c := httpwire.NewConn(s.hooks())
	c.Request([]byte("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"))
	c.Request(make([]byte, 1<<16))
	c.Answer([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
	c.Request(nil)
	c.Answer(nil)
	assert.Empty(t, s.requests)
	assert.Zero(t, s.answers)
}

func TestMethod(t *testing.T) {
	for path, want := range map[string]string{
		"/v3/kv/txn":           "/etcdserverpb.KV/Txn",
		"/v3beta/lease/grant":  "/etcdserverpb.Lease/LeaseGrant",
		"/v3alpha/kv/range":    "/etcdserverpb.KV/Range",
		"/v3/kv/lease/revoke/": "/etcdserverpb.Lease/LeaseRevoke",
		"/v3/lock/lock":        "/v3lockpb.Lock/Lock",
		"/v2/keys/a":           "",
		"/health":              "",
	} {
		assert.Equal(t, want, httpwire.Method(path), path)
	}
	assert.True(t, grpcwire.IsWrite(httpwire.Method("/v3/kv/txn")), "a gateway's write is a write")
}

func TestLooksLike(t *testing.T) {
	for p, want := range map[string]bool{"POST /v3/kv/txn HTTP/1.1\r\n": true, "GET": true, "PRI * HTTP/2.0": true,
		"\x16\x03\x01": false, "post /": false, "": false} {
		assert.Equal(t, want, httpwire.LooksLike([]byte(p)), "%q", p)
	}
}

// Any bytes at all, in any split, never panic or hang, and the reader's
// goroutines end with the connection.
func FuzzConn(f *testing.F) {
	f.Add([]byte(post("/v3/lease/grant", `{"TTL":2}`)), []byte(ok(`{"ID":"1","TTL":"2"}`)))
	f.Add([]byte(post("/v3/watch", `{}`)), []byte(chunked(`{"result":{"events":[1]}}`)))
	f.Fuzz(func(t *testing.T, req, ans []byte) {
		var s seen
		c := httpwire.NewConn(s.hooks())
		for i := 0; i < len(req); i += 7 {
			c.Request(req[i:min(i+7, len(req))])
		}
		c.Answer(ans)
		c.Request(nil)
		c.Answer(nil)
	})
}

// A read that opens a gateway request names its method, and is a request
// unless it opens a stream; a read in the middle of a body, and bytes of
// no request, name none.
func TestRequestOf(t *testing.T) {
	type want struct {
		method  string
		request bool
	}
	for p, w := range map[string]want{
		post("/v3/kv/deleterange", `{"key":"YQ=="}`):   {"/etcdserverpb.KV/DeleteRange", true},
		"GET /v3/kv/range?x=1 HTTP/1.1\r\nHost: a\r\n": {"/etcdserverpb.KV/Range", true},
		post("/v3/lease/keepalive", `{"ID":"1"}`):      {"/etcdserverpb.Lease/LeaseKeepAlive", false},
		`{"key":"YQ=="}`:            {},
		"POST /health HTTP/1.1\r\n": {},
		"":                          {},
	} {
		method, ok := httpwire.RequestOf([]byte(p))
		assert.Equal(t, w, want{method, ok}, "%q", p)
	}
}
