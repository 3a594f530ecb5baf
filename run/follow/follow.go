package follow

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/locklab/locklab/history"
)

// maxRenewals is how many of a grant's latest renewals are kept.
const maxRenewals = 32

// Grant is what a sweep knows of one grant it follows. Its Mutex guards
// the fields below it, and the fields of the store's watch that embeds it.
type Grant struct {
	Client string
	Token  int64 // the grant's token (0: the lock gives none)
	Lease  int64 // the lease it rests on, as the store numbers it

	sync.Mutex
	// LastAlive is when the last look that found the grant standing was
	// sent.
	LastAlive time.Time
	// Renewals are the client's latest requests that kept the lease
	// alive, as the lab saw them sent.
	Renewals []time.Time
	// Done: lost, gone or released, no longer followed.
	Done bool
	// Lost: the server ended the grant's lease.
	Lost bool
}

// Followed is the grant itself: what a List needs of a store's watch.
func (g *Grant) Followed() *Grant { return g }

// Alive notes that a look sent at sent found the grant standing.
func (g *Grant) Alive(sent time.Time) {
	g.Lock()
	defer g.Unlock()
	g.LastAlive = sent
}

// Renewed notes a renewal sent at at, while the grant is followed.
func (g *Grant) Renewed(at time.Time) {
	g.Lock()
	defer g.Unlock()
	if g.Done {
		return
	}
	if len(g.Renewals) == maxRenewals {
		g.Renewals = g.Renewals[1:]
	}
	g.Renewals = append(g.Renewals, at)
}

// Ended reports whether the grant is no longer followed.
func (g *Grant) Ended() bool {
	g.Lock()
	defer g.Unlock()
	return g.Done
}

// Lose marks the grant's lease ended by the server and says how: a lease
// of ttl, alive at LastAlive, kept by the renewals noted — with started,
// if not zero, the grant's own start of its TTL, as the first (never the
// last renewal sent). The caller holds the Mutex.
func (g *Grant) Lose(ttl time.Duration, started time.Time) history.LeaseEnd {
	g.Done, g.Lost = true, true
	end := history.LeaseEnd{Client: g.Client, Lease: g.Lease, LastAlive: g.LastAlive, TTL: ttl}
	if !started.IsZero() {
		end.Renewals = []time.Time{started}
	}
	for _, at := range g.Renewals {
		if !at.After(g.LastAlive) {
			end.LastRenewal = at
		}
		end.Renewals = append(end.Renewals, at)
	}
	return end
}

// A Watch is a store's watch of one grant, which embeds a Grant.
type Watch interface {
	Followed() *Grant
}

// List is the watches of one run, in the order their grants were made.
// Its zero value is empty and ready.
type List[W Watch] struct {
	mu sync.Mutex
	ws []W
}

// Add follows w.
func (l *List[W]) Add(w W) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ws = append(l.ws, w)
}

// All is every watch, followed or not.
func (l *List[W]) All() []W {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ws)
}

// Pending is the watches still followed.
func (l *List[W]) Pending() []W {
	var out []W
	for _, w := range l.All() {
		if !w.Followed().Ended() {
			out = append(out, w)
		}
	}
	return out
}

// Renewed notes a keep-alive that client sent at at on lease (a session
// it keeps by every request it sends): a renewal of each of client's
// grants on it still followed.
func (l *List[W]) Renewed(client string, lease int64, at time.Time) {
	for _, w := range l.Pending() {
		if g := w.Followed(); g.Client == client && g.Lease == lease {
			g.Renewed(at)
		}
	}
}

// Of is the newest watch of a grant on lease.
func (l *List[W]) Of(lease int64) (W, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range slices.Backward(l.ws) {
		if w.Followed().Lease == lease {
			return w, true
		}
	}
	var none W
	return none, false
}

// Released stops following the grant on lease, its client's release
// having returned, after one last look (a lease that ended just before the
// release is the release of a grant whose lease had ended), and reports
// whether the server had ended it.
func (l *List[W]) Released(lease int64, look func(W)) bool {
	w, ok := l.Of(lease)
	if !ok {
		return false
	}
	look(w)
	g := w.Followed()
	g.Lock()
	defer g.Unlock()
	g.Done = true
	return g.Lost
}

// ErrNotFollowed is Gone asked of a lease no followed grant rests on.
var ErrNotFollowed = errors.New("no grant the lab follows rests on that lease")

// Gone looks again at the grant on lease and reports whether it has left
// the store (its lease lost, or gone).
func (l *List[W]) Gone(lease int64, look func(W)) (bool, error) {
	w, ok := l.Of(lease)
	if !ok {
		return false, ErrNotFollowed
	}
	look(w)
	return w.Followed().Ended(), nil
}
