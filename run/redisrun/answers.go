package redisrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/poll"
	"github.com/locklab/locklab/run"
)

// ReleaseAnswerLost has client release its latest grant over a link that
// fails one way: the release reaches the primary and takes effect there
// (the lab waits until the grant's key no longer holds its value, and
// records that it saw so), then the connection is severed with the answer
// held, so the client hears only that its connection broke. The lock must
// take that release as ambiguous, and a retry of it as a release of that
// grant only.
func (e *Env) ReleaseAnswerLost(ctx context.Context, client string) (run.Outcome, error) {
	if e.masters {
		return run.Outcome{}, e.NotHere("release answer=lost", "a Redlock release reaches independent masters one by one")
	}
	g, held, _ := e.Holding(client)
	switch {
	case !held:
		return run.Outcome{}, fmt.Errorf("release answer=lost: %s holds nothing", client)
	case g.Key == "" || g.Value == "":
		return run.Outcome{}, fmt.Errorf("release answer=lost: %s's grant names no key and value to watch on the server", client)
	}
	links, err := e.Links(client)
	if err != nil {
		return run.Outcome{}, err
	}
	type result struct {
		out run.Outcome
		err error
	}
	done := make(chan result, 1)
	in, err := e.Apply(ctx, faults.Fault{Kind: faults.LoseAnswer, Client: client}, func(ctx context.Context, in *faults.Injection) error {
		for _, p := range links {
			p.CutAnswers()
		}
		in.SetUndo(func(context.Context) error {
			for _, p := range links {
				p.Sever()
				p.Heal()
			}
			return nil
		})
		bg := e.Background(ctx)
		go func() {
			out, err := e.ReleaseGrant(bg, client, "")
			done <- result{out, err}
		}()
		wctx, cancel := context.WithTimeout(ctx, faults.DefaultWait)
		defer cancel()
		err := poll.Until(wctx, client+"'s release to take effect on the server", 10*time.Millisecond, func(ctx context.Context) (bool, error) {
			admin := e.set.Admin(e.set.Primary())
			if admin == nil {
				return false, errors.New("no primary answers")
			}
			v, err := admin.Get(ctx, g.Key).Result()
			return err != nil || v != g.Value, nil // redis.Nil: gone
		})
		if err == nil {
			e.Histories().Observe(history.ObservedReleased, client, "")
		}
		return err
	})
	if in != nil {
		err = errors.Join(err, in.Undo(ctx)) // the answer dies with its connection; the link heals
	}
	r := <-done
	if err != nil {
		return run.Outcome{}, fmt.Errorf("release answer=lost: %w", err)
	}
	out := run.Settled(r.out, r.err)
	out.Effected = true
	return out, nil
}

// Mark notes where the primary stands before a client writes: nothing —
// the lessons that lose an acquire's answer ask for the free lock, so a
// write of the client's is the lock's key standing again.
func (s store) Mark(context.Context) (int64, error) { return 0, nil }

// Written reports whether the lock's key stands on the primary: the key
// the run's locks take (under the run's prefix), or one a grant of the
// run named outside it (a library that makes its own key of the name).
func (s store) Written(ctx context.Context, _ string, _ int64) (bool, error) {
	admin := s.e.set.Admin(s.e.set.Primary())
	if admin == nil {
		return false, errors.New("no primary answers")
	}
	n, err := admin.Exists(ctx, append([]string{s.e.Options().Prefix + "lock"}, s.e.grantKeysOutside()...)...).Result()
	return n > 0, err
}

// Where says where Written looks.
func (s store) Where() string { return "lock key on the primary" }
