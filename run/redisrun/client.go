package redisrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster/netproxy"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/pausegate"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/process"
	"github.com/locklab/locklab/run"
)

// client is one lab client: a link of its own to each server it talks to
// (cut, delayed or paused apart from every other client's), a Redis client
// over each, and its Locker.
type client struct {
	name   string
	member string
	links  []*netproxy.Proxy
	gate   pausegate.Gate
	// answered counts the chunks of answers its links carried: a waiter
	// that polls was answered since a moment if it grew.
	answered atomic.Int64

	mu      sync.Mutex
	rcs     []*redis.Client
	locker  lock.Locker
	grant   lock.Grant
	lease   int64 // the held grant's lease (its number), zero if none
	held    bool
	grants  map[string]lock.Grant // every grant, by label
	leaseOf map[string]int64      // every grant's lease, by label
	// releasing: from just before a release is sent until it returns.
	releasing bool
	async     chan run.Outcome
	crashes   int
	// acquiring: an acquire is pending; pauseID: the pause on the
	// timeline (zero: none).
	acquiring bool
	pauseID   int
	// values are the values of the grants the lab watches for this
	// client: a request carrying one is a keep-alive (see renewed).
	values map[string]func(time.Time)
}

// AddClient creates a client called name; member names its home (every
// client of a replicated set talks to the primary, of Redlock's masters to
// each).
func (e *Env) AddClient(_ context.Context, name, member string) error {
	if _, err := e.member(member); err != nil {
		return err
	}
	e.mu.Lock()
	_, dup := e.clients[name]
	e.mu.Unlock()
	if dup {
		return fmt.Errorf("client %s exists already", name)
	}
	c := &client{name: name, member: member, grants: map[string]lock.Grant{}, leaseOf: map[string]int64{},
		values: map[string]func(time.Time){}}
	c.gate.Name = name
	c.gate.OnPark = c.park
	var links []*netproxy.Proxy
	if e.masters {
		for i := range e.set.Names() {
			p, err := e.set.Link(i)
			if err != nil {
				return err
			}
			links = append(links, p)
		}
	} else {
		p, err := e.set.PrimaryLink()
		if err != nil {
			return err
		}
		links = append(links, p)
	}
	c.links = links
	for _, p := range links {
		p.SetTap(c.tap)
	}
	if err := e.renew(c); err != nil {
		return err
	}
	e.mu.Lock()
	e.clients[name] = c
	e.order = append(e.order, name)
	e.mu.Unlock()
	e.each(func(r *history.Recorder) { r.Observe(history.ObservedConnected, name, member) })
	return nil
}

// renew gives c new Redis clients and a new Locker, as a process started
// again makes its lock anew.
func (e *Env) renew(c *client) error {
	var rcs []*redis.Client
	for i, p := range c.links {
		server := e.set.Primary()
		if e.masters {
			server = i
		}
		rcs = append(rcs, e.newRedis(server, p.Addr()))
	}
	l, err := e.factory(rcs, "lock", e.opts)
	if err != nil {
		for _, rc := range rcs {
			rc.Close()
		}
		return fmt.Errorf("making the lock for %s: %w", c.name, err)
	}
	c.mu.Lock()
	old, oldLocker := c.rcs, c.locker
	c.rcs, c.locker = rcs, l
	c.mu.Unlock()
	if oldLocker != nil {
		oldLocker.Close()
	}
	for _, rc := range old {
		rc.Close()
	}
	return nil
}

// tap reads one connection of c's: requests carrying a watched grant's
// value are its keep-alives; answers are counted.
func (c *client) tap() (requests, answers func([]byte)) {
	return func(b []byte) {
			now := time.Now()
			c.mu.Lock()
			var hit []func(time.Time)
			for v, note := range c.values {
				if bytes.Contains(b, []byte(v)) {
					hit = append(hit, note)
				}
			}
			c.mu.Unlock()
			for _, note := range hit {
				note(now)
			}
		}, func(b []byte) {
			if b != nil { // nil: the connection ended
				c.answered.Add(1)
			}
		}
}

// cut holds every one of c's links.
func (c *client) cut() {
	for _, p := range c.links {
		p.Cut()
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

// heal lets c's links carry traffic again.
func (c *client) heal() {
	for _, p := range c.links {
		p.Heal()
	}
}

// close ends c's lock, clients and links.
func (c *client) close() error {
	c.gate.Resume(nil)
	c.mu.Lock()
	l, rcs := c.locker, c.rcs
	c.mu.Unlock()
	var errs []error
	if l != nil {
		errs = append(errs, l.Close())
	}
	for _, rc := range rcs {
		errs = append(errs, rc.Close())
	}
	for _, p := range c.links {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

func (e *Env) client(name string) (*client, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.clients[name]
	if !ok {
		return nil, fmt.Errorf("unknown client %q (clients: %s)", name, strings.Join(e.order, ", "))
	}
	return c, nil
}

func (e *Env) allClients() []*client {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*client, 0, len(e.order))
	for _, n := range e.order {
		out = append(out, e.clients[n])
	}
	return out
}

// Crash kills client's process: its link is severed, its lock ends (a
// watchdog stops renewing), what it held is left to expire on the server,
// and it starts again holding nothing.
func (e *Env) Crash(ctx context.Context, name string) (run.Outcome, error) {
	c, err := e.client(name)
	if err != nil {
		return run.Outcome{}, err
	}
	id := e.faultStart(history.FaultSpec{Kind: history.FaultCrashClient, Client: name}, name)
	c.cut()
	c.mu.Lock()
	c.crashes++
	c.held = false // its last grant's key stays on the server until it expires
	c.mu.Unlock()
	c.gate.Kill()
	if p := c.process(); p != nil {
		p.Kill() // a process dies with its client, with no chance to clean up
	}
	for _, p := range c.links {
		p.Sever()
	}
	err = e.renew(c)
	c.heal()
	e.each(func(r *history.Recorder) { r.Observe(history.ObservedCrashed, name, "") })
	e.faultEnd(id, history.FaultSpec{Kind: history.FaultCrashClient, Client: name}, name, err)
	if err != nil {
		return run.Outcome{}, err
	}
	return run.Outcome{Kind: run.Crashed, Client: name}, nil
}
