package zkd_test

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/cluster/zkd"
)

// frame is one request as a client sends it: its length, then xid, opcode
// and body; xid < 0 with no opcode is the connect request's shape.
func frame(xid, op int32, body int) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(8+body))
	b = binary.BigEndian.AppendUint32(b, uint32(xid))
	b = binary.BigEndian.AppendUint32(b, uint32(op))
	return append(b, make([]byte, body)...)
}

// The connect request is no write, however its bytes read; a ping, a
// getChildren and an exists are none either; a create is one, whether it
// comes whole, behind other requests, or split across reads — reported by
// the read that completes its header.
func TestWritesAreSpottedOffTheWire(t *testing.T) {
	connect := binary.BigEndian.AppendUint32(nil, 12)
	connect = append(connect, frame(0, 15, 4)[4:]...) // a body that looks like a create2: not a header
	ping, children, exists := frame(-2, 11, 0), frame(1, 8, 20), frame(2, 3, 20)
	create := frame(3, 1, 40)

	spot := zkd.Writes()
	assert.False(t, spot(connect), "the connect request")
	assert.False(t, spot(append(append(ping, children...), exists...)))
	assert.True(t, spot(append(ping, create...)))
	assert.False(t, spot(ping))

	spot = zkd.Writes()
	assert.False(t, spot(connect[:3]))
	assert.False(t, spot(connect[3:]))
	assert.False(t, spot(create[:6]), "half a header")
	assert.True(t, spot(create[6:12]), "the read that completes it")
	assert.False(t, spot(create[12:]), "the rest of its body")
	assert.False(t, spot(children))
	for _, op := range []int32{2, 5, 14, 15, 19, 21} {
		assert.True(t, spot(frame(9, op, 3)), "opcode %d", op)
	}
}

// A request the client waits on is spotted, a read or a write; a ping,
// authentication, the watches set again and the connect request are not.
func TestRequestsAreSpottedOffTheWire(t *testing.T) {
	connect := binary.BigEndian.AppendUint32(nil, 12)
	connect = append(connect, frame(3, 8, 4)[4:]...) // a body that looks like a request: not a header
	spot := zkd.Requests()
	assert.False(t, spot(connect), "the connect request")
	assert.False(t, spot(append(append(frame(-2, 11, 0), frame(-4, 100, 8)...), frame(-8, 101, 12)...)))
	children := frame(4, 8, 20)
	assert.False(t, spot(children[:7]), "half a header")
	assert.True(t, spot(children[7:]), "the read that completes it")
	assert.True(t, spot(frame(5, 1, 30)), "a create")
	assert.True(t, spot(frame(0, 3, 10)), "xid zero")
}

// A ping is spotted, whole or split across reads, and behind other
// requests; no other request is one, nor is the connect request.
func TestPingsAreSpottedOffTheWire(t *testing.T) {
	connect := binary.BigEndian.AppendUint32(nil, 12)
	connect = append(connect, frame(-2, 11, 4)[4:]...) // a body that looks like a ping: not a header
	spot := zkd.Pings()
	assert.False(t, spot(connect), "the connect request")
	assert.False(t, spot(append(frame(4, 8, 20), frame(-8, 101, 12)...)), "a getChildren, the watches set again")
	ping := frame(-2, 11, 0)
	assert.False(t, spot(ping[:5]), "half a header")
	assert.True(t, spot(ping[5:]), "the read that completes it")
	assert.True(t, spot(append(frame(5, 1, 30), ping...)), "behind a create")
}

// answer is one frame as the server sends it: length, xid, zxid, err and
// a body.
func answer(xid int32, body int) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(16+body))
	b = binary.BigEndian.AppendUint32(b, uint32(xid))
	b = binary.BigEndian.AppendUint64(b, 7)
	b = binary.BigEndian.AppendUint32(b, 0)
	return append(b, make([]byte, body)...)
}

// Notifications count the frames with the notification's xid, after the
// connect answer, however the reads split them.
func TestNotificationsAreCountedOffTheWire(t *testing.T) {
	connect := binary.BigEndian.AppendUint32(nil, 8)
	connect = append(connect, answer(-1, 0)[4:12]...) // looks like a notification: not a header
	stream := append(append(append(connect, answer(1, 10)...), answer(-1, 30)...), answer(-2, 0)...)
	stream = append(stream, answer(-1, 5)...)
	count := zkd.Notifications()
	n := 0
	for i := 0; i < len(stream); i += 5 {
		n += count(stream[i:min(i+5, len(stream))])
	}
	assert.Equal(t, 2, n)
}

// The session a connection was given is read from the connect answer,
// however its bytes are split; an expired session's answer (0) names none.
func TestTheSessionIsReadFromTheConnectAnswer(t *testing.T) {
	connect := func(id int64) []byte {
		b := binary.BigEndian.AppendUint32(nil, 36)
		b = binary.BigEndian.AppendUint32(b, 0)    // protocol version
		b = binary.BigEndian.AppendUint32(b, 1000) // timeout
		b = binary.BigEndian.AppendUint64(b, uint64(id))
		b = binary.BigEndian.AppendUint32(b, 16)
		return append(b, make([]byte, 16)...)
	}
	var got []int64
	read := zkd.Session(func(id int64) { got = append(got, id) })
	stream := append(connect(0x1234), answer(-1, 8)...)
	for i := 0; i < len(stream); i += 3 {
		read(stream[i:min(i+3, len(stream))])
	}
	assert.Equal(t, []int64{0x1234}, got)
	got = nil
	zkd.Session(func(id int64) { got = append(got, id) })(connect(0))
	assert.Empty(t, got)
}
