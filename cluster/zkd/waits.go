package zkd

import (
	"encoding/binary"
	"sync"
)

// watchOps are the reads that may set a watch, their request's body a
// path and, last, the watch flag (ZooDefs.OpCode): exists, getData,
// getChildren, getChildren2.
var watchOps = map[int32]bool{3: true, 4: true, 8: true, 12: true}

// watchFrame bounds how much of a request frame is kept to read its watch
// flag: a watching read's frame is a path and a byte.
const watchFrame = 4096

// Waits returns readers of one client connection's two directions, each
// fed every read of that direction in order, and a report of whether the
// client waits on it: every request it sent that expects an answer (xid
// zero or more) has been answered — ZooKeeper answers a connection's
// requests in order — and the latest set a watch. A lock's waiter that
// has set its watch has asked all it asks before it waits: a fault then
// meets it waiting, not a request of its under way.
func Waits() (requests, answers func([]byte), waiting func() bool) {
	var (
		mu          sync.Mutex
		outstanding int
		watch       bool
	)
	requests = splitFrames(watchFrame, func(frame []byte, size int) {
		if len(frame) < 8 {
			return
		}
		xid, op := int32(binary.BigEndian.Uint32(frame)), int32(binary.BigEndian.Uint32(frame[4:]))
		if xid < 0 {
			return // a ping, authentication, the watches set again
		}
		mu.Lock()
		outstanding++
		watch = watchOps[op] && len(frame) == size && frame[size-1] == 1
		mu.Unlock()
	})
	answers = splitFrames(8, func(frame []byte, _ int) {
		if len(frame) >= 4 && int32(binary.BigEndian.Uint32(frame)) >= 0 {
			mu.Lock()
			outstanding = max(outstanding-1, 0)
			mu.Unlock()
		}
	})
	waiting = func() bool {
		mu.Lock()
		defer mu.Unlock()
		return outstanding == 0 && watch
	}
	return requests, answers, waiting
}

// splitFrames returns a reader of one direction of a connection, fed its
// reads in order (nil: the connection ended), that calls each with the
// first keep bytes of every complete frame after the first (the connect
// request or answer, which has no header) and the frame's size, its
// length prefix not counted.
func splitFrames(keep int, each func(frame []byte, size int)) func([]byte) {
	var (
		connected bool
		length    []byte // the current frame's length prefix read so far
		left      int    // bytes of the current frame still to read
		size      int
		frame     []byte
	)
	return func(b []byte) {
		for len(b) > 0 {
			if len(length) < 4 {
				take := min(4-len(length), len(b))
				length, b = append(length, b[:take]...), b[take:]
				if len(length) < 4 {
					return
				}
				size = int(int32(binary.BigEndian.Uint32(length)))
				left, frame = max(size, 0), frame[:0]
			}
			take := min(left, len(b))
			if room := keep - len(frame); room > 0 {
				frame = append(frame, b[:min(take, room)]...)
			}
			left, b = left-take, b[take:]
			if left > 0 {
				return
			}
			if connected {
				each(frame, size)
			}
			connected, length = true, length[:0]
		}
	}
}
