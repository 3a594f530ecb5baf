package zklock

import (
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// tells follows the grants of one Locker of the lab's recipes, each with
// the Lost it gives its holder (see follow), until the grant is released
// or the Locker closed.
type tells struct {
	mu    sync.Mutex
	stops map[int64]chan struct{} // by grant token
}

// lookEvery is how often a grant's connection is looked at.
const lookEvery = 20 * time.Millisecond

// follow returns the Lost of a grant on session, token its node's zxid:
// closed once the client can know the session is gone — ZooKeeper said so
// (StateExpired, heard only on reconnecting), the connection has another
// session, or, unless deaf, the client has had no session for a whole
// session timeout: by then the ensemble has ended it. A client cut off
// from the ensemble hears of its expiry only once it reconnects (the
// ZooKeeper FAQ's warning; Curator counts the timeout for that), so a
// deaf lock, which waits for the word, tells a cut-off holder nothing
// while the next holder works.
func (t *tells) follow(c *zk.Conn, session, token int64, timeout time.Duration, deaf bool) <-chan struct{} {
	lost, stop := make(chan struct{}), make(chan struct{})
	t.mu.Lock()
	if t.stops == nil {
		t.stops = map[int64]chan struct{}{}
	}
	if old, ok := t.stops[token]; ok {
		close(old)
	}
	t.stops[token] = stop
	t.mu.Unlock()
	go func() {
		tick := time.NewTicker(lookEvery)
		defer tick.Stop()
		var without time.Time // since when the client has had no session
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			st := c.State()
			switch {
			case st == zk.StateExpired, c.SessionID() != session && st == zk.StateHasSession:
				close(lost)
				return
			case st == zk.StateHasSession:
				without = time.Time{}
			case without.IsZero():
				without = time.Now()
			case !deaf && time.Since(without) >= timeout:
				close(lost)
				return
			}
		}
	}()
	return lost
}

// stop ends following the grant token (released: what its Lost says no
// longer matters).
func (t *tells) stop(token int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.stops[token]; ok {
		close(s)
		delete(t.stops, token)
	}
}

// stopAll ends following every grant (the Locker closed).
func (t *tells) stopAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for token, s := range t.stops {
		close(s)
		delete(t.stops, token)
	}
}
