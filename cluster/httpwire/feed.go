package httpwire

import (
	"bufio"
	"errors"
	"io"
	"sync"
)

// feed turns the bytes a direction is fed into a reader for net/http's
// parser, running in a goroutine of its own, and makes each put wait until
// the parser has taken them in and wants more: what those bytes complete
// is reported before they are forwarded.
type feed struct {
	in   chan []byte   // what put gives; closed by put(nil)
	took chan struct{} // a put's bytes are read and the reader wants more
	done chan struct{} // the goroutine has ended
	end  sync.Once
	buf  []byte
	owes bool  // a put waits for took
	left int64 // what Read may still give, if not negative (limit)
}

func newFeed() *feed {
	return &feed{in: make(chan []byte), took: make(chan struct{}), done: make(chan struct{}), left: -1}
}

// errTooLong is what Read returns past a limit.
var errTooLong = errors.New("longer than its limit")

// limit lets Read give at most n more bytes beyond what its reader has
// buffered (bufio's size); a negative n lifts the limit. Only the
// goroutine that reads may call it.
func (f *feed) limit(n int64) {
	if n >= 0 {
		n += 4096
	}
	f.left = n
}

// put hands p to the reader and waits until it is read; nil ends the
// feed.
func (f *feed) put(p []byte) {
	if p == nil {
		f.end.Do(func() { close(f.in) })
		return
	}
	select {
	case f.in <- p:
	case <-f.done:
		return
	}
	select {
	case <-f.took:
	case <-f.done:
	}
}

// Read gives what was put, and once it is all read, tells the put so
// before it waits for more.
func (f *feed) Read(p []byte) (int, error) {
	if len(f.buf) == 0 {
		if f.owes {
			f.owes = false
			f.took <- struct{}{}
		}
		b, ok := <-f.in
		if !ok {
			return 0, io.EOF
		}
		f.buf, f.owes = b, true
	}
	if f.left == 0 {
		return 0, errTooLong
	}
	if f.left > 0 && int64(len(p)) > f.left {
		p = p[:f.left]
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	if f.left > 0 {
		f.left -= int64(n)
	}
	return n, nil
}

// run reads the feed with read until it ends or read fails, then drains
// it, so that put never waits on a reader that stopped.
func (f *feed) run(read func(*bufio.Reader) error) {
	defer close(f.done)
	_ = read(bufio.NewReader(f))
	f.left = -1
	_, _ = io.Copy(io.Discard, f)
}
