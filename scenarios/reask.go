package scenarios

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/lock"
)

// ReaskTimeout bounds the acquire Reask asks: a program that waits that
// long for a lock the store has freed answers as a waiting lock may, and
// is stopped like any acquire given up.
const ReaskTimeout = 3 * time.Second

// A GrantEnder ends grant g on the store, as a lesson does (its lease
// revoked, its key deleted), and says whether the store holds a grant:
// what Reask needs of a store.
type GrantEnder interface {
	End(ctx context.Context, g lock.Grant) error
	Holds(ctx context.Context, g lock.Grant) (bool, error)
}

// Reask is a preflight's check of what a lock run as a process answers to
// an acquire asked while it holds (the process protocol: ask the store,
// never answer from memory; isolated-asks asks so). l, alone on the
// store, acquires, st ends that grant on the store, and l is asked to
// acquire again without a release in between: an error, or no answer
// within ReaskTimeout, is an answer the store could give; a grant is, if
// the store holds it. A grant the store does not hold is the program
// answering from what it remembers: Reask says so in one sentence. Every
// grant made is released.
func Reask(ctx context.Context, l lock.Locker, st GrantEnder) error {
	actx, cancel := context.WithTimeout(ctx, PreflightTimeout)
	g, err := l.Acquire(actx)
	cancel()
	if err != nil {
		return fmt.Errorf("preflight: acquire, a second time alone: %w", err)
	}
	if err := st.End(ctx, g); err != nil {
		return fmt.Errorf("preflight: ending its grant on the store: %w", err)
	}
	actx, cancel = context.WithTimeout(ctx, ReaskTimeout)
	again, err := l.Acquire(actx)
	cancel()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return nil // the store's answer, or waiting
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), PreflightTimeout)
		defer cancel()
		l.Release(rctx, again) //nolint:errcheck // the lessons judge releases
	}()
	held, err := st.Holds(ctx, again)
	if err != nil {
		return fmt.Errorf("preflight: reading its grant on the store: %w", err)
	}
	if !held {
		return errors.New(memoryAnswer(g, again))
	}
	return nil
}

// memoryAnswer says that a lock answered an acquire asked while it held
// grant g, which the store had ended, with grant again, which the store
// does not hold.
func memoryAnswer(g, again lock.Grant) string {
	same := ""
	if again.Key == g.Key && again.Token == g.Token && again.Value == g.Value {
		same = ", the grant it had before"
	}
	return fmt.Sprintf("preflight: asked to acquire while it held a grant the lab had ended on the store, the lock "+
		"answered granted key=%s%s, which the store does not hold: it answered from memory. An acquire asked while the "+
		"program holds must ask the store, as a first acquire does (docs/any-language.md): the "+
		"isolated-asks lesson asks so, and a grant the store does not hold is judged as the lock's", again.Key, same)
}
