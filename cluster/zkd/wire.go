package zkd

import "encoding/binary"

// ZooKeeper's request opcodes that may change the tree (its jute protocol,
// ZooDefs.OpCode): create, delete, setData, setACL, multi, create2,
// reconfig, createContainer, deleteContainer, createTTL.
var writeOps = map[int32]bool{1: true, 2: true, 5: true, 7: true, 14: true, 15: true, 16: true, 19: true, 20: true, 21: true}

// Writes returns a reader of one client connection's requests, fed each
// read of what the client sends, in order: it reports whether that read
// holds the header of a request that may change the tree (a create, a
// delete, a multi…). A connection's first frame is its connect request,
// which has no header; every one after is [length][xid][opcode][body]. A
// header split between reads is reported by the read that completes it —
// before that read is forwarded, so before the server can have the whole
// request.
func Writes() func([]byte) bool {
	var (
		connected bool   // the connect request has been read
		skip      int64  // bytes of the current frame's body still to pass
		head      []byte // a frame's start read so far (at most 12 bytes)
	)
	return func(b []byte) bool {
		write := false
		for len(b) > 0 {
			if skip > 0 {
				n := min(skip, int64(len(b)))
				skip -= n
				b = b[n:]
				continue
			}
			need := 12 // length, xid, opcode
			if !connected {
				need = 4 // length alone
			}
			take := min(need-len(head), len(b))
			head = append(head, b[:take]...)
			b = b[take:]
			if len(head) < need {
				break
			}
			length := int64(int32(binary.BigEndian.Uint32(head)))
			if connected && writeOps[int32(binary.BigEndian.Uint32(head[8:]))] {
				write = true
			}
			skip = max(length-int64(need-4), 0)
			connected, head = true, head[:0]
		}
		return write
	}
}
