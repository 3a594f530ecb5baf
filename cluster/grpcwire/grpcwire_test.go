package grpcwire_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/cluster/grpcwire"
)

// Bytes that are not cleartext HTTP/2 — a TLS handshake, say — stop the
// reader at once; nothing is learned and nothing breaks.
func TestNotHTTP2StopsTheReader(t *testing.T) {
	var got []int64
	c := grpcwire.NewConn(grpcwire.Hooks{Grant: func(id, _ int64) { got = append(got, id) }})
	c.Request([]byte("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"))
	c.Answer([]byte{0, 0, 200, 0, 0, 0, 0, 0, 1})
	c.Request(make([]byte, 1<<16))
	assert.Empty(t, got)
}

// Any bytes at all, in any split, never panic.
func FuzzConn(f *testing.F) {
	f.Add([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"), []byte{0, 0, 0, 4, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, req, ans []byte) {
		c := grpcwire.NewConn(grpcwire.Hooks{Grant: func(int64, int64) {}, Request: func(string) {}, Wake: func() {}, KeepAlive: func(int64) {}})
		for i := 0; i < len(req); i += 7 {
			c.Request(req[i:min(i+7, len(req))])
		}
		c.Answer(ans)
	})
}

// A CONTINUATION frame that continues no header block is not HTTP/2 as a
// client sends it: the reader stops, in the middle of a read, without
// panicking on what is left of that read.
func TestStrayContinuationStops(t *testing.T) {
	c := grpcwire.NewConn(grpcwire.Hooks{Grant: func(int64, int64) { t.Fatal("nothing to learn") }})
	stray := []byte{0, 0, 1, 9, 4, 0, 0, 0, 3, 0x82} // CONTINUATION, END_HEADERS, stream 3
	ping := []byte{0, 0, 8, 6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}
	c.Request(append(append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), stray...), ping...))
	c.Request(ping)
}
