package run

import (
	"context"

	"github.com/locklab/locklab/faults"
)

// LoseAnswer runs step — an acquire whose answers a fault holds from its
// write on — on bg in the background, and wait, which waits for the store
// to show that the write took effect, with a context that ends when step
// does (nothing more will be written) or faults.DefaultWait has passed.
// Then it undoes the fault (undo severs the connections with the answers
// unheard) and waits for step's end. It returns what step came to
// (Settled), wait's error and undo's.
func LoseAnswer(ctx, bg context.Context, step func(context.Context) (Outcome, error), wait, undo func(context.Context) error) (Outcome, error, error) {
	var r struct {
		out Outcome
		err error
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		r.out, r.err = step(bg)
	}()
	wctx, cancel := context.WithTimeout(ctx, faults.DefaultWait)
	go func() {
		select {
		case <-ended:
			cancel() // nothing more will be written
		case <-wctx.Done():
		}
	}()
	err := wait(wctx)
	cancel()
	uerr := undo(ctx)
	<-ended
	return Settled(r.out, r.err), err, uerr
}
