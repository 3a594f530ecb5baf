package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/clockshim"
	"github.com/locklab/locklab/internal/pausegate"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/run"
)

// client is one lab client: its links, its lock over them, and what it
// holds.
type client struct {
	name   string
	member string
	links  []*netproxy.Proxy
	gate   pausegate.Gate
	async  run.Async
	pause  run.Pause
	// answered counts the chunks of answers its links carried: a waiter
	// that polls was answered since a moment if it grew.
	answered atomic.Int64
	// writes reads a connection's requests for writes (nil: the store
	// cannot, see LostAnswers); atWrite arms the first one to hold every
	// answer from then on (AcquireAnswerLost).
	writes  func() func([]byte) bool
	atWrite atomic.Bool
	// asks reads a connection's requests for those its client waits on
	// (nil: the store cannot tell, see LostRequests); afterWrite is where
	// an acquire next=lost stands, requestCut closed once it cut.
	asks       func() func([]byte) bool
	afterWrite atomic.Int32
	requestCut chan struct{}
	// split is where an acquire or release stands under a pause at
	// in-acquire or in-release (split.go).
	split atomic.Int32
	// atRenewal arms a hold of every answer from the client's next
	// request carrying a followed grant's value, or its next the store
	// tells is a renewal (HoldAnswers); renewals is that teller (nil: the
	// store tells none, see RenewalTeller).
	atRenewal atomic.Bool
	renewals  func() func([]byte) bool
	// released, while a release's answer is to be lost, reports whether
	// it took effect on the server behind a link: that link's answers are
	// held from then on (ReleaseAnswerLostWhen).
	released   func(link int) bool
	releasedMu sync.Mutex // guards released, held while it is asked
	// wire reads a connection's requests and answers for the store (nil:
	// it does not, see WireReader).
	wire func() (requests, answers func([]byte))

	mu      sync.Mutex
	locker  lock.Locker
	done    func() error // closes what the store made besides the lock
	grant   lock.Grant
	lease   int64 // the held grant's lease, zero if none
	held    bool
	grants  map[string]lock.Grant // every grant, by label
	leaseOf map[string]int64      // every grant's lease, by label
	// releasing: from just before a release is sent until it returns.
	releasing bool
	// acquiring: an acquire is pending.
	acquiring bool
	// endedWaiting is the lease the store ended while the pending acquire
	// waited (zero: none): a grant that follows on another lease is on a
	// new one.
	endedWaiting int64
	// crashes counts the client's crashes; born is the count its lock was
	// made at: a lock born before the last crash died with it, and the
	// client's next step makes it anew (ready).
	crashes, born int
	// stuck: locker is still in an Acquire the lab stopped waiting for
	// (run.Abandoned); a crash's new Locker ends it.
	stuck bool
	// told closes when the newest grant's Lost has (nil: it has none);
	// quit closes when the Locker is replaced (told.go).
	told, quit chan struct{}
	// notes are the values of the grants the store follows for this
	// client, each with its note: a request carrying one is a keep-alive.
	notes map[string]func(time.Time)
	// clock is the client's own wall clock, for a lock run as a program in
	// a run that moves clients' clocks (clientclock.go); nil otherwise.
	clock *clockshim.Clock
}

// AddClient creates a client called name living at member, with links of
// its own and a fresh lock.
func (e *Engine) AddClient(_ context.Context, name, member string) error {
	e.mu.Lock()
	_, dup := e.clients[name]
	e.mu.Unlock()
	if dup {
		return fmt.Errorf("client %s exists already", name)
	}
	links, err := e.store.Links(name, member)
	if err != nil {
		return err
	}
	c := &client{name: name, member: member, links: links, grants: map[string]lock.Grant{},
		leaseOf: map[string]int64{}, notes: map[string]func(time.Time){}}
	c.gate.Name = name
	c.gate.OnPark = c.park
	if wt, ok := e.store.(WriteTeller); ok {
		c.writes = wt.Writes
	}
	if rt, ok := e.store.(RequestTeller); ok {
		c.asks = rt.Requests
	}
	if rt, ok := e.store.(RenewalTeller); ok {
		c.renewals = rt.Renewals
	}
	if wr, ok := e.store.(WireReader); ok {
		c.wire = func() (func([]byte), func([]byte)) { return wr.Wire(name) }
	}
	for i, p := range links {
		p.SetTap(func() (requests, answers func([]byte)) { return c.tap(i) })
	}
	if err := e.renew(c); err != nil {
		for _, p := range links {
			p.Close()
		}
		return err
	}
	e.mu.Lock()
	e.clients[name] = c
	e.order = append(e.order, name)
	e.mu.Unlock()
	e.hs.Observe(history.ObservedConnected, name, member)
	return nil
}

// renew gives c a new lock, as a process started again (or a client whose
// session the store ended) makes its lock anew; it holds nothing then.
func (e *Engine) renew(c *client) error {
	c.mu.Lock()
	born := c.crashes
	c.mu.Unlock()
	l, done, err := e.store.Locker(c.name, c.links)
	if err != nil {
		return fmt.Errorf("making the lock for %s: %w", c.name, err)
	}
	if err := e.clockOf(c, l); err != nil {
		l.Close()
		if done != nil {
			done()
		}
		return err
	}
	c.mu.Lock()
	oldLocker, oldDone, oldQuit := c.locker, c.done, c.quit
	c.locker, c.done, c.quit, c.stuck = l, done, make(chan struct{}), false
	c.held, c.born = false, born
	c.mu.Unlock()
	if oldQuit != nil {
		close(oldQuit) // what closing the old Locker does to its Lost is the lab's doing
	}
	if oldLocker != nil {
		oldLocker.Close()
	}
	if oldDone != nil {
		oldDone()
	}
	return nil
}

// Renew gives client a new lock now, as after its session ended.
func (e *Engine) Renew(name string) error {
	c, err := e.client(name)
	if err != nil {
		return err
	}
	return e.renew(c)
}

// retire ends c's lock as its process dies, with c's links cut so that
// nothing of it gets out: what the store made for it besides (its
// clients) closes now, so that nothing renews what it held; the lock
// itself is closed when the client's next step makes a new one (ready),
// as a process started again finds nothing of the old.
func (e *Engine) retire(c *client) {
	c.mu.Lock()
	done, quit := c.done, c.quit
	c.done, c.quit = nil, make(chan struct{})
	c.mu.Unlock()
	if quit != nil {
		close(quit) // what the crash does to its grants' Lost is the lab's doing
	}
	if done != nil {
		done()
	}
}

// tap reads one connection of c's: requests carrying a followed grant's
// value are its keep-alives, and its writes are spotted where the store
// can (see spots); answers are counted.
func (c *client) tap(link int) (requests, answers func([]byte)) {
	var sent, read func([]byte)
	if c.wire != nil {
		sent, read = c.wire()
	}
	var renewal func([]byte) bool
	if c.renewals != nil {
		renewal = c.renewals()
	}
	return c.spots(func(b []byte) {
			if sent != nil {
				sent(b)
			}
			if renewal != nil && b != nil && renewal(b) {
				c.holdAtRenewal()
			}
			now := time.Now()
			c.mu.Lock()
			var hit []func(time.Time)
			for v, note := range c.notes {
				if bytes.Contains(b, []byte(v)) {
					hit = append(hit, note)
				}
			}
			c.mu.Unlock()
			if len(hit) > 0 {
				c.holdAtRenewal()
			}
			for _, note := range hit {
				note(now)
			}
		}), func(b []byte) {
			if b != nil { // nil: the connection ended
				c.answered.Add(1)
				c.holdIfReleased(link)
			}
			if read != nil {
				read(b)
			}
		}
}

// WireReader is a Store that reads each connection of a client's off the
// wire, both ways: what it answers (the session a lock run as a process
// makes for itself) and what the client asks (whether it is done asking
// and waits).
type WireReader interface {
	// Wire returns, for one new connection of client's, a reader fed each
	// read of the client's requests and one fed each read of the store's
	// answers, in order (nil: that direction ended); either may be nil.
	Wire(client string) (requests, answers func([]byte))
}

// PausePoint has client pass point of its work (after-acquire…): an
// armed pause stops it there (Pause).
func (e *Engine) PausePoint(ctx context.Context, name, point string) error {
	c, err := e.client(name)
	if err != nil {
		return err
	}
	return c.gate.PausePoint(ctx, point)
}

// Pending reports whether client has a background step under way.
func (e *Engine) Pending(name string) bool {
	c, err := e.client(name)
	return err == nil && c.async.Pending()
}

// Links are client's links, for a fault of the store's own that holds or
// heals them.
func (e *Engine) Links(name string) ([]*netproxy.Proxy, error) {
	c, err := e.client(name)
	if err != nil {
		return nil, err
	}
	return c.links, nil
}

// EndedWaiting records that the store ended lease, client's, by a fault
// of its own: if client is waiting in an acquire, a grant that follows on
// another lease is on a new one (run.Outcome.NewLease).
func (e *Engine) EndedWaiting(name string, lease int64) {
	c, err := e.client(name)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.acquiring {
		c.endedWaiting = lease
	}
}

// cut holds every one of c's links.
func (c *client) cut() {
	for _, p := range c.links {
		p.Cut()
	}
}

// heal lets c's links carry traffic again.
func (c *client) heal() {
	for _, p := range c.links {
		p.Heal()
	}
}

// park is a pause taking hold: c's links are cut and a lock run as a
// process is frozen (SIGSTOP), so that it renews nothing while paused.
func (c *client) park() {
	c.cut()
	if p := c.process(); p != nil {
		p.Stop()
	}
}

// unpark ends a pause: the process continues, then its links carry traffic.
func (c *client) unpark() {
	if p := c.process(); p != nil {
		p.Continue()
	}
	c.heal()
}

// process is c's lock if it runs as a process, else nil.
func (c *client) process() process.Program {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, _ := c.locker.(process.Program)
	return p
}

// close ends c's lock, what the store made for it, and its links.
func (c *client) close() error {
	c.gate.Resume(nil)
	c.mu.Lock()
	l, done := c.locker, c.done
	c.mu.Unlock()
	var errs []error
	if l != nil {
		// What a lock answers its Close is its own: a session whose lease
		// the store ended says so, and rightly.
		l.Close()
	}
	if done != nil {
		errs = append(errs, done())
	}
	for _, p := range c.links {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// Holding is what client holds now: its latest grant, whether it holds
// it, and whether it is releasing it.
func (e *Engine) Holding(name string) (g lock.Grant, held, releasing bool) {
	c, err := e.client(name)
	if err != nil {
		return lock.Grant{}, false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.grant, c.held, c.releasing
}

// A Holder is a client that holds a grant.
type Holder struct {
	Client string
	Grant  lock.Grant
}

// Holders lists the clients that hold a grant now, in creation order.
func (e *Engine) Holders() []Holder {
	var out []Holder
	for _, c := range e.all() {
		c.mu.Lock()
		if c.held {
			out = append(out, Holder{c.name, c.grant})
		}
		c.mu.Unlock()
	}
	return out
}

// LeaseOf is the lease of client's latest grant (held, or left behind by a
// crash), zero if none.
func (e *Engine) LeaseOf(name string) (int64, error) {
	c, err := e.client(name)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lease, nil
}

// Sever breaks every connection of every client's links: what they reach
// next is new (a new primary after a failover).
func (e *Engine) Sever() {
	for _, c := range e.all() {
		for _, p := range c.links {
			p.Sever()
		}
	}
}

// OpenLinks opens n links with open, closing those opened if one fails: a
// Store's Links for a client that talks to n servers.
func OpenLinks(n int, open func(i int) (*netproxy.Proxy, error)) ([]*netproxy.Proxy, error) {
	var links []*netproxy.Proxy
	for i := range n {
		p, err := open(i)
		if err != nil {
			for _, l := range links {
				l.Close()
			}
			return nil, err
		}
		links = append(links, p)
	}
	return links, nil
}
