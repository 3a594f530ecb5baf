package redisrun

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/run/engine"
	"github.com/locklab/locklab/run/follow"
)

// early is how much sooner than its expiry a key must vanish to count as
// deleted rather than expired: the sweep's own read of the expiry is
// taken after the moment it dates it from, so a key that expired is never
// early by more than a poll.
const early = 2 * engine.SweepEvery

// watch is one grant the sweep follows, from its grant until its key
// leaves the server (lost: it expired; gone: something deleted it) or its
// client releases it. Its lease is its number in the run; LastAlive the
// last read that found the key holding the value, and Renewals the
// client's requests carrying it.
type watch struct {
	follow.Grant
	key   string
	value string

	expires time.Time // when the key would expire, as of the last read that found it
	// clocks are the servers' clock offsets when expires was read: a
	// clock moved forward since brings the key's expiry there that much
	// nearer (jump-clock).
	clocks  []time.Duration
	granted time.Time // when the grant returned: its key was set by then, a TTL's start
}

// follow starts following g, client's new grant: it was alive when the
// lock returned it. Its lease is its number in the run; renewed notes the
// client's keep-alives.
func (e *Env) follow(client string, g lock.Grant) (int64, func(time.Time)) {
	now := time.Now()
	e.mu.Lock()
	e.leases++
	lease := e.leases
	e.mu.Unlock()
	w := &watch{Grant: follow.Grant{Client: client, Token: g.Token, Lease: lease, LastAlive: now},
		key: g.Key, value: g.Value, granted: now, expires: now.Add(e.TTLDuration()), clocks: e.clocks()}
	e.watched.Add(w)
	return lease, w.Renewed
}

// released stops following lease, its client's release having returned,
// and reports whether the server had ended it before.
func (e *Env) released(lease int64) bool {
	return e.watched.Released(lease, func(w *watch) { e.look(context.Background(), w) })
}

// sweep looks once at every grant still followed.
func (e *Env) sweep(ctx context.Context) {
	for _, w := range e.watched.Pending() {
		e.look(ctx, w)
	}
}

// look reads w's key on the servers it lives on and records, the first
// time it is not there, how it left: expired (the lease the grant rests on
// ended — also under a release still under way, one stopped between its
// commands) or deleted before its expiry while its client held it and was
// not releasing it (the grant gone from the server).
func (e *Env) look(ctx context.Context, w *watch) {
	if w.Ended() {
		return
	}
	// The clocks as of before the read: a jump during it brings the expiry
	// nearer, never further.
	sent, clocks := time.Now(), e.clocks()
	alive, left, known := e.read(ctx, w)
	if !known {
		return
	}
	w.Lock()
	defer w.Unlock()
	if w.Done {
		return
	}
	if alive {
		w.LastAlive, w.expires, w.clocks = sent, sent.Add(left), clocks
		return
	}
	g, held, releasing := e.Holding(w.Client)
	holds := held && g.Value == w.value
	// A server whose wall clock the lab moved forward since expires the
	// key that much sooner than the lab's clock says (jump-clock).
	beforeExpiry := time.Now().Add(early).Add(e.clockMoved(w.clocks)).Before(w.expires)
	switch {
	case releasing && holds && beforeExpiry:
		return // the release's own hand; it says what happened
	case beforeExpiry:
		w.Done = true
		if holds {
			e.Histories().GrantGone(w.Client, w.Token)
		}
		return
	}
	// The grant starts the key's TTL as a renewal does: Renewals' first
	// (as on etcd), though never the last renewal sent.
	e.Histories().LeaseLost(w.Lose(e.TTLDuration(), w.granted))
}

// clocks are the servers' wall clock offsets from the machine's, in order.
func (e *Env) clocks() []time.Duration {
	out := make([]time.Duration, len(e.set.Names()))
	for i := range out {
		out[i] = e.set.ClockOffset(i)
	}
	return out
}

// clockMoved is the furthest any server's clock moved forward since it was
// at then (zero where none did).
func (e *Env) clockMoved(then []time.Duration) time.Duration {
	var moved time.Duration
	for i, now := range e.clocks() {
		if i < len(then) {
			moved = max(moved, now-then[i])
		}
	}
	return moved
}

// read asks the servers w's key lives on whether it still holds w's value:
// on a majority of them for Redlock. left is how long it has to live
// there; known is false when too few servers answered to tell.
func (e *Env) read(ctx context.Context, w *watch) (alive bool, left time.Duration, known bool) {
	servers := e.servers()
	quorum := len(servers)/2 + 1
	var lefts []time.Duration
	answered := 0
	for _, i := range servers {
		admin := e.set.Admin(i)
		if admin == nil {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		var get *redis.StringCmd
		var pttl *redis.DurationCmd
		_, err := admin.Pipelined(rctx, func(p redis.Pipeliner) error {
			get, pttl = p.Get(rctx, w.key), p.PTTL(rctx, w.key)
			return nil
		})
		cancel()
		if err != nil && err != redis.Nil {
			continue
		}
		answered++
		if v, err := get.Result(); err == nil && v == w.value {
			lefts = append(lefts, max(pttl.Val(), 0))
		}
	}
	if len(lefts) >= quorum {
		slices.Sort(lefts)
		return true, lefts[len(lefts)-quorum], true
	}
	// Not alive for certain only if the servers that did not answer
	// could not make up a majority with those that hold it.
	return false, 0, len(lefts)+len(servers)-answered < quorum
}

// gone looks again at the grant resting on lease and reports whether its
// key left the servers (expired, or deleted).
func (e *Env) gone(ctx context.Context, lease int64) (bool, error) {
	return e.watched.Gone(lease, func(w *watch) { e.look(ctx, w) })
}

// left names the servers the run's lock key — or a key a grant named
// outside the run's prefix — is left on.
func (e *Env) left(ctx context.Context) ([]string, error) {
	var left []string
	keys := append([]string{e.Options().Prefix + "lock"}, e.grantKeysOutside()...)
	for _, i := range e.servers() {
		admin := e.set.Admin(i)
		if admin == nil {
			continue
		}
		n, err := admin.Exists(ctx, keys...).Result()
		if err != nil {
			return nil, err
		}
		if n > 0 {
			left = append(left, "its key on "+e.Members()[i])
		}
	}
	return left, nil
}

// grantKeysOutside are the keys grants named that are not under the run's
// prefix, each once: the lab follows the key a grant names, wherever it
// is, and leaves none of them behind.
func (e *Env) grantKeysOutside() []string {
	var keys []string
	for _, w := range e.watched.All() {
		if !strings.HasPrefix(w.key, e.Options().Prefix) && !slices.Contains(keys, w.key) {
			keys = append(keys, w.key)
		}
	}
	return keys
}
