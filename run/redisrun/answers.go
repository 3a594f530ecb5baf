package redisrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/run"
)

// ReleaseAnswerLost has client release its latest grant over links that
// fail one way once it took effect: the release reaches the primary, or
// every master, and the answers from a server are held from the moment
// the grant's key there no longer holds its value (a release that reads
// before it writes, GET then DEL, hears its read). The lab waits until the
// key holds it nowhere and records that it saw so; then the connections
// are severed with the answers held, so the client hears only that its
// connection broke. The lock must take that release as ambiguous, and a
// retry of it as a release of that grant only.
func (e *Env) ReleaseAnswerLost(ctx context.Context, client string) (run.Outcome, error) {
	g, held, _ := e.Holding(client)
	switch {
	case !held:
		return run.Outcome{}, fmt.Errorf("release answer=lost: %s holds nothing", client)
	case g.Key == "" || g.Value == "":
		return run.Outcome{}, fmt.Errorf("release answer=lost: %s's grant names no key and value to watch on the server", client)
	}
	servers := e.servers()
	return e.ReleaseAnswerLostWhen(ctx, client, func(ctx context.Context, link int) (bool, error) {
		if link >= len(servers) {
			return false, fmt.Errorf("no server behind %s's link %d", client, link)
		}
		admin := e.set.Admin(servers[link])
		if admin == nil {
			return false, fmt.Errorf("%s does not answer", e.set.Names()[servers[link]])
		}
		v, err := admin.Get(ctx, g.Key).Result()
		switch {
		case errors.Is(err, redis.Nil):
			return true, nil // gone
		case err != nil:
			return false, err // not seen: a master that does not answer shows nothing
		}
		return v != g.Value, nil
	})
}

// Mark notes where the primary stands before a client writes: nothing —
// the lessons that lose an acquire's answer ask for the free lock, so a
// write of the client's is the lock's key standing again.
func (s store) Mark(context.Context) (int64, error) { return 0, nil }

// Written reports whether the lock's key stands on the primary, or on a
// majority of Redlock's masters: the key the run's locks take (under the
// run's prefix), or one a grant of the run named outside it (a library
// that makes its own key of the name). A server that does not answer shows
// no key; its error is returned only when too few stand.
func (s store) Written(ctx context.Context, _ string, _ int64) (bool, error) {
	keys := append([]string{s.e.Options().Prefix + "lock"}, s.e.grantKeysOutside()...)
	servers := s.e.servers()
	stand := 0
	var errs []error
	for _, i := range servers {
		admin := s.e.set.Admin(i)
		if admin == nil {
			errs = append(errs, fmt.Errorf("%s does not answer", s.e.set.Names()[i]))
			continue
		}
		n, err := admin.Exists(ctx, keys...).Result()
		switch {
		case err != nil:
			errs = append(errs, err)
		case n > 0:
			stand++
		}
	}
	if stand > len(servers)/2 {
		return true, nil
	}
	return false, errors.Join(errs...)
}

// Where says where Written looks.
func (s store) Where() string {
	if s.e.masters {
		return "lock key on a majority of the masters"
	}
	return "lock key on the primary"
}
