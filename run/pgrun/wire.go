package pgrun

import (
	"bytes"
	"encoding/binary"
	"sync"
	"time"
)

// The protocol's numbers the lab reads: a client that asks for TLS or GSS
// encryption first (psycopg2 does, by default) is answered one byte, 'N'
// or 'S', before anything else; BackendKeyData ('K') names the session's
// backend process.
const (
	sslRequest    = 80877103
	gssEncRequest = 80877104
	backendKey    = 'K'
)

// Wire reads one connection of client's (engine.WireReader): every
// request is activity that keeps its session from being idle (a keep-alive
// of the grants it holds), and the server's BackendKeyData names the
// session's backend process — the lease of what the client is granted on
// it, and what expire ends.
//
// The lab's own connections on the link (pg-guarded's, named
// labApplication in their startup message) are neither: they are not the
// lock's sessions.
func (s store) Wire(client string) (requests, answers func([]byte)) {
	c := &wire{}
	return func(b []byte) {
			if b == nil {
				return
			}
			if pid, lock := c.request(b); lock && pid != 0 {
				s.e.watched.Renewed(client, pid, time.Now())
			}
		}, func(b []byte) {
			if b == nil {
				return
			}
			if pid := c.answer(b); pid != 0 && !c.labs() {
				s.e.setPid(client, pid)
			}
		}
}

// labApplication is the application_name of the lab's own connections on
// a client's link.
const labApplication = "locklab-resource"

// wire is one connection's reading: the client's opening messages (which
// carry no type byte) until its startup message, and the server's
// messages framed by their type and length, only BackendKeyData kept.
type wire struct {
	mu sync.Mutex
	// opening: the client's untyped messages read so far (bounded: an
	// opening message is a few hundred bytes); started once its startup
	// message came; oneByte counts the one-byte answers its encryption
	// requests are owed.
	opening []byte
	started bool
	oneByte int
	// lab: the startup message named the lab's own application; pid is
	// the session's backend, once the server named it.
	lab bool
	pid int64
	// head is the server message's header read so far; body what is left
	// of its body, kept when it is BackendKeyData.
	head []byte
	left int
	key  []byte
	typ  byte
}

// labs says whether the connection is the lab's own.
func (w *wire) labs() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lab
}

// request reads the client's bytes until its startup message, and returns
// the session's backend (0: not named yet) and whether it is the lock's.
func (w *wire) request(b []byte) (pid int64, lock bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for !w.started && len(b) > 0 {
		w.opening = append(w.opening, b...)
		b = nil
		for len(w.opening) >= 8 {
			n := int(binary.BigEndian.Uint32(w.opening))
			code := binary.BigEndian.Uint32(w.opening[4:])
			if n < 8 || n > 10000 {
				w.started = true // not an opening the lab knows: read no more
				break
			}
			if len(w.opening) < n {
				break
			}
			msg := w.opening[:n]
			w.opening = w.opening[n:]
			if code == sslRequest || code == gssEncRequest {
				w.oneByte++
				continue
			}
			w.started = true
			w.lab = bytes.Contains(msg, []byte("application_name\x00"+labApplication+"\x00"))
			w.opening = nil
			break
		}
	}
	return w.pid, !w.lab
}

// answer reads the server's bytes and returns the backend process a
// BackendKeyData among them names (0: none).
func (w *wire) answer(b []byte) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var pid int64
	for len(b) > 0 {
		switch {
		case w.oneByte > 0 && w.left == 0 && len(w.head) == 0:
			w.oneByte--
			b = b[1:]
		case w.left > 0:
			n := min(w.left, len(b))
			if w.typ == backendKey && len(w.key) < 8 { // its process id and secret key: 8 bytes kept, no more
				w.key = append(w.key, b[:min(n, 8-len(w.key))]...)
			}
			w.left -= n
			b = b[n:]
			if w.left == 0 && w.typ == backendKey && len(w.key) >= 4 {
				pid = int64(binary.BigEndian.Uint32(w.key))
				w.pid = pid
			}
		default:
			n := min(5-len(w.head), len(b))
			w.head = append(w.head, b[:n]...)
			b = b[n:]
			if len(w.head) == 5 {
				w.typ, w.left, w.key = w.head[0], int(binary.BigEndian.Uint32(w.head[1:]))-4, nil
				w.head = w.head[:0]
				if w.left < 0 {
					w.left = 0
				}
			}
		}
	}
	return pid
}

// Renewals reads a client connection's requests (engine.RenewalTeller):
// every message a lock's session sends after its startup message keeps
// the session from being idle, a keep-alive query among them, and
// hold-answers holds the client's answers from its next one. The lab's
// own connections send none.
func (s store) Renewals() func([]byte) bool {
	c := &wire{}
	return func(b []byte) bool {
		if b == nil {
			return false
		}
		c.mu.Lock()
		started := c.started
		c.mu.Unlock()
		_, lock := c.request(b)
		return started && lock
	}
}
