package pgrun

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
)

// opening is a client's untyped opening message of code, with body.
func opening(code uint32, body string) []byte {
	b := make([]byte, 8, 8+len(body))
	binary.BigEndian.PutUint32(b, uint32(8+len(body)))
	binary.BigEndian.PutUint32(b[4:], code)
	return append(b, body...)
}

// message is a server message of type t with body.
func message(t byte, body []byte) []byte {
	b := []byte{t, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(4+len(body)))
	return append(b, body...)
}

// A connection's backend process is read off the server's answers, in
// whatever pieces they come, after the one-byte answer to an encryption
// request (psycopg2 asks for TLS first); the lab's own connections, named
// by their application, are told apart.
func TestTheWireNamesTheSession(t *testing.T) {
	for _, app := range []string{"psql", labApplication} {
		w := &wire{}
		client := append(opening(sslRequest, ""), opening(196608, "user\x00locklab\x00application_name\x00"+app+"\x00\x00")...)
		for _, b := range client {
			w.request([]byte{b})
		}
		key := make([]byte, 8)
		binary.BigEndian.PutUint32(key, 4242)
		server := append([]byte{'N'}, message('R', []byte{0, 0, 0, 0})...)
		server = append(server, message('S', []byte("server_version\x0015\x00"))...)
		server = append(server, message(backendKey, key)...)
		server = append(server, message('Z', []byte{'I'})...)
		var pid int64
		for i := 0; i < len(server); i += 3 {
			if p := w.answer(server[i:min(i+3, len(server))]); p != 0 {
				pid = p
			}
		}
		assert.Equal(t, int64(4242), pid, app)
		got, lock := w.request([]byte("Q\x00\x00\x00\x0dSELECT 1\x00"))
		assert.Equal(t, int64(4242), got)
		assert.Equal(t, app != labApplication, lock, app)
	}
}
