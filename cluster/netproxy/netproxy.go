package netproxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// chunkQueue is how many reads one direction may buffer while cut or delayed
// before the reader blocks and TCP back-pressure takes over.
const chunkQueue = 256

// Proxy forwards every connection accepted on Addr to the address Upstream
// returns at accept time. All methods are safe for concurrent use.
type Proxy struct {
	ln       net.Listener
	upstream func() (string, error)

	mu      sync.Mutex
	healed  chan struct{} // closed while traffic flows; open while cut
	answers chan struct{} // closed while upstream's answers flow; open while held
	delay   time.Duration
	conns   map[net.Conn]struct{}
	closed  bool
	tap     func() (requests, answers func([]byte))
	// redial is how long a refused dial of upstream is tried again.
	redial time.Duration

	done chan struct{}
	wg   sync.WaitGroup
}

// New listens on a kernel-chosen loopback port and forwards to the address
// that upstream returns for each new connection. An upstream error (the member
// is down) closes the new connection at once.
func New(upstream func() (string, error)) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netproxy: listen on loopback: %w", err)
	}
	healed, answers := make(chan struct{}), make(chan struct{})
	close(healed)
	close(answers)
	p := &Proxy{
		ln:       ln,
		upstream: upstream,
		healed:   healed,
		answers:  answers,
		conns:    make(map[net.Conn]struct{}),
		done:     make(chan struct{}),
	}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// SetTap has every new connection's bytes shown as they are read: tap is
// called once per connection for a pair of functions, one fed what the
// client sends, the other what upstream answers, each from its own
// goroutine, before the bytes are forwarded (they must not be kept: copy
// them), and once with nil when the direction ends. Connections already
// open are not shown.
func (p *Proxy) SetTap(tap func() (requests, answers func([]byte))) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tap = tap
}

// SetRedial has a connection whose upstream refuses it (nothing listens
// there yet) wait for up to d, dialling again, before it is dropped. A
// connection accepted by the proxy looks established to its client, which
// would not try again as it does on a refused connect: a ZooKeeper
// follower that connects to its new leader a moment before the leader
// listens, and then sees the connection end, gives up following and
// leaves the leader without a quorum until the leader's own time-out.
// Zero (the default) drops it at once.
func (p *Proxy) SetRedial(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.redial = d
}

// dial dials upstream, again for as long as redial allows while it is
// refused, until the proxy closes.
func (p *Proxy) dial() (net.Conn, error) {
	p.mu.Lock()
	until := time.Now().Add(p.redial)
	p.mu.Unlock()
	for {
		addr, err := p.upstream()
		if err != nil {
			return nil, err
		}
		out, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil || time.Now().After(until) {
			return out, err
		}
		select {
		case <-p.done:
			return nil, net.ErrClosed
		case <-time.After(redialEvery):
		}
	}
}

// redialEvery is how often a refused upstream is dialled again.
const redialEvery = 10 * time.Millisecond

// Addr is the proxy's listening address, host:port on 127.0.0.1.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut stops traffic in both directions, holding it rather than dropping it:
// bytes already sent wait in the proxy (then in the kernel's buffers) and new
// connections wait before reaching upstream. Neither side sees an error, as in a
// real partition of a TCP connection. Cut on a cut proxy does nothing.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.healed:
		p.healed = make(chan struct{})
	default:
	}
}

// CutAnswers holds traffic from upstream only: requests still arrive and
// take effect, their answers wait in the proxy — a link that fails one way.
// Sever then drops what is held: the server did the work, the client never
// hears of it.
func (p *Proxy) CutAnswers() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.answers:
		p.answers = make(chan struct{})
	default:
	}
}

// Heal undoes Cut and CutAnswers: held bytes are delivered in order and
// traffic flows again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ch := range []chan struct{}{p.healed, p.answers} {
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
}

// AnswersHeld reports whether traffic from upstream is held now (Cut, or
// CutAnswers).
func (p *Proxy) AnswersHeld() bool { return p.held(true) }

// IsCut reports whether the proxy is cut.
func (p *Proxy) IsCut() bool {
	select {
	case <-p.healedChan():
		return false
	default:
		return true
	}
}

// SetDelay makes every chunk of data, in each direction, arrive d later than it
// was sent (latency, not a throughput cap). Zero removes the delay.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = max(d, 0)
	p.mu.Unlock()
}

// Delay returns the delay SetDelay set.
func (p *Proxy) Delay() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay
}

// Sever closes every connection open through the proxy, both ends, as a
// crashed peer's kernel would. New connections are still accepted.
func (p *Proxy) Sever() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// Close stops listening, closes every connection and waits for the proxy's
// goroutines to end. It does not depend on either side closing first.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.done)
	err := p.ln.Close()
	p.mu.Unlock()
	p.Sever()
	p.wg.Wait()
	return err
}

func (p *Proxy) healedChan() chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.healed
}

// gates are what traffic in one direction waits for: the link healed, and
// for answers also the answers not held.
func (p *Proxy) gates(answers bool) []chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if answers {
		return []chan struct{}{p.healed, p.answers}
	}
	return []chan struct{}{p.healed}
}

// held reports whether traffic in the direction is held now.
func (p *Proxy) held(answers bool) bool {
	for _, g := range p.gates(answers) {
		select {
		case <-g:
		default:
			return true
		}
	}
	return false
}

// flow waits until traffic in the direction may pass; false if the proxy
// closed first.
func (p *Proxy) flow(answers bool) bool {
	for p.held(answers) {
		for _, g := range p.gates(answers) {
			select {
			case <-g:
			case <-p.done:
				return false
			}
		}
	}
	return true
}

// track registers c so Sever and Close can reach it; false once closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if !p.track(in) {
			in.Close()
			return
		}
		p.wg.Add(1)
		go p.serve(in)
	}
}

// serve connects one accepted connection upstream, once the proxy is not cut.
func (p *Proxy) serve(in net.Conn) {
	defer p.wg.Done()
	defer p.untrack(in)
	select {
	case <-p.healedChan():
	case <-p.done:
		return
	}
	out, err := p.dial()
	if err != nil {
		return
	}
	if !p.track(out) {
		out.Close()
		return
	}
	defer p.untrack(out)
	p.mu.Lock()
	tap := p.tap
	p.mu.Unlock()
	var requests, answers func([]byte)
	if tap != nil {
		requests, answers = tap()
	}
	var pipes sync.WaitGroup
	pipes.Add(2)
	go func() { defer pipes.Done(); p.pipe(out, in, false, requests) }()
	go func() { defer pipes.Done(); p.pipe(in, out, true, answers) }()
	pipes.Wait()
}

type chunk struct {
	data []byte
	due  time.Time
}

// pipe copies src to dst. A chunk goes straight through when nothing is
// queued, the link is not cut and there is no delay; otherwise it waits in a
// queue, so that a delay is latency (not a throughput cap) and a cut holds
// data instead of dropping it. answers says src is upstream (CutAnswers
// holds it); observe, if not nil, sees every read. When either side ends,
// both are closed.
func (p *Proxy) pipe(dst, src net.Conn, answers bool, observe func([]byte)) {
	q := make(chan chunk, chunkQueue)
	var (
		wmu     sync.Mutex   // one write to dst at a time
		pending atomic.Int64 // chunks queued or being written by the writer
	)
	go func() {
		defer close(q)
		if observe != nil {
			defer observe(nil) // the direction ended
		}
		// One buffer serves every read; only a chunk that has to wait is
		// copied out of it. (A fresh 32 KiB buffer per read was a tenth of
		// the lab's CPU under lock contention, most of it garbage collection.)
		buf := make([]byte, 32*1024)
		for {
			n, err := src.Read(buf)
			if n > 0 && observe != nil {
				observe(buf[:n])
			}
			if n > 0 {
				delay := p.Delay()
				if delay == 0 && pending.Load() == 0 && !p.held(answers) {
					wmu.Lock()
					_, werr := dst.Write(buf[:n])
					wmu.Unlock()
					if werr != nil {
						return
					}
				} else {
					pending.Add(1)
					select {
					case q <- chunk{data: bytes.Clone(buf[:n]), due: time.Now().Add(delay)}:
					case <-p.done:
						return
					}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		dst.Close()
		src.Close()
		for range q { // let the reader finish
		}
	}()
	for c := range q {
		if wait := time.Until(c.due); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-p.done:
				t.Stop()
				return
			}
		}
		if !p.flow(answers) {
			return
		}
		wmu.Lock()
		_, err := dst.Write(c.data)
		wmu.Unlock()
		pending.Add(-1)
		if err != nil {
			return
		}
	}
}

var _ io.Closer = (*Proxy)(nil)
