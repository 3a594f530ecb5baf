package zkd

import "encoding/binary"

// ZooKeeper's request opcodes that may change the tree (its jute protocol,
// ZooDefs.OpCode): create, delete, setData, setACL, multi, create2,
// reconfig, createContainer, deleteContainer, createTTL.
var writeOps = map[int32]bool{1: true, 2: true, 5: true, 7: true, 14: true, 15: true, 16: true, 19: true, 20: true, 21: true}

// notificationXid is the xid of a watch's notification, which the server
// sends unasked.
const notificationXid = -1

// Writes returns a reader of one client connection's requests, fed each
// read of what the client sends, in order: it reports whether that read
// holds the header of a request that may change the tree (a create, a
// delete, a multi…). A connection's first frame is its connect request,
// which has no header; every one after is [length][xid][opcode][body]. A
// header split between reads is reported by the read that completes it —
// before that read is forwarded, so before the server can have the whole
// request.
func Writes() func([]byte) bool {
	read := frames(12, func(head []byte) bool { return writeOps[int32(binary.BigEndian.Uint32(head[8:]))] })
	return func(b []byte) bool { return read(b) > 0 }
}

// Requests returns a reader of one client connection's requests, fed each
// read of what the client sends, in order: it reports whether that read
// holds the header of a request its client waits on an answer to — one of
// xid zero or more. ZooKeeper's special xids are negative: a ping (-2),
// authentication (-4), the watches set again on a new connection (-8).
// The connect request, the first frame, is none either.
func Requests() func([]byte) bool {
	read := frames(12, func(head []byte) bool { return int32(binary.BigEndian.Uint32(head[4:])) >= 0 })
	return func(b []byte) bool { return read(b) > 0 }
}

// Frames returns a reader of one client connection's requests, fed each
// read of what the client sends, in order: it reports whether that read
// holds the header of any request after the connect request, a ping among
// them. Every one keeps the connection's session alive: the server times
// a session out only when it hears nothing on it.
func Frames() func([]byte) bool {
	read := frames(12, func([]byte) bool { return true })
	return func(b []byte) bool { return read(b) > 0 }
}

// pingXid is the xid of a ping, the request that keeps a session alive.
const pingXid = -2

// Pings returns a reader of one client connection's requests, fed each
// read of what the client sends, in order: it reports whether that read
// holds the header of a ping, the request a client sends to keep its
// session alive when it has nothing else to ask.
func Pings() func([]byte) bool {
	read := frames(12, func(head []byte) bool { return int32(binary.BigEndian.Uint32(head[4:])) == pingXid })
	return func(b []byte) bool { return read(b) > 0 }
}

// Notifications returns a reader of one client connection's answers, fed
// each read of what the server sends, in order: it says how many watch
// notifications (a node changed, or its children did) that read
// completes. The first frame is the connect answer; every one after is
// [length][xid][zxid][err][body].
func Notifications() func([]byte) int {
	return frames(8, func(head []byte) bool { return int32(binary.BigEndian.Uint32(head[4:])) == notificationXid })
}

// frames returns a reader of one direction of a connection, fed its reads
// in order: every frame after the first has its first need bytes (its
// length among them) handed to counts, and the reader returns how many of
// the headers a read completed counts said yes to.
func frames(need int, counts func(head []byte) bool) func([]byte) int {
	var (
		connected bool   // the first frame, which has no header, has been read
		skip      int64  // bytes of the current frame still to pass
		head      []byte // a frame's start read so far
	)
	return func(b []byte) int {
		n := 0
		for len(b) > 0 {
			if skip > 0 {
				k := min(skip, int64(len(b)))
				skip -= k
				b = b[k:]
				continue
			}
			want := need
			if !connected {
				want = 4 // its length alone
			}
			take := min(want-len(head), len(b))
			head = append(head, b[:take]...)
			b = b[take:]
			if len(head) < want {
				break
			}
			if connected && counts(head) {
				n++
			}
			skip = max(int64(int32(binary.BigEndian.Uint32(head)))-int64(want-4), 0)
			connected, head = true, head[:0]
		}
		return n
	}
}

// Session returns a reader of one client connection's answers, fed each
// read of what the server sends, in order: once the connect answer is
// read — [length][protocolVersion][timeOut][sessionId][password] — it
// calls found with the session the server gave the client (the one it
// asked for again, or a new one). An answer of session 0 (the session it
// asked for had expired) is not one.
func Session(found func(id int64)) func([]byte) {
	var head []byte
	done := false
	return func(b []byte) {
		if done || b == nil {
			return
		}
		head = append(head, b[:min(20-len(head), len(b))]...)
		if len(head) < 20 {
			return
		}
		done = true
		if id := int64(binary.BigEndian.Uint64(head[12:20])); id != 0 {
			found(id)
		}
	}
}
