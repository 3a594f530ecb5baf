package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Windows keeps the windows of the faults applied to one run, on any
// store: each opens on the timeline before its fault is applied and closes
// when it is undone. It is safe for concurrent use.
type Windows struct {
	rec Recorder

	mu     sync.Mutex
	nextID int
	active []*Injection
}

// NewWindows returns windows recorded to rec (nil records nothing).
func NewWindows(rec Recorder) *Windows {
	if rec == nil {
		rec = RecorderFunc(func(Event) {})
	}
	return &Windows{rec: rec}
}

// An Applier does a fault's work on a store, saying as it goes what the
// fault resolved to and how to undo it (Injection.SetTarget, SetUndo), so
// that a failure part-way can be undone.
type Applier func(ctx context.Context, in *Injection) error

// Injection is a fault that has been applied and not yet undone.
type Injection struct {
	w      *Windows
	id     int
	fault  Fault
	target string
	gone   bool                        // expire-lease: the lease was gone before it
	undo   func(context.Context) error // nil when nothing to undo
	open   bool                        // its window stays open to the end of the history

	once sync.Once
	err  error
}

// Fault is the fault as it was asked for.
func (in *Injection) Fault() Fault { return in.fault }

// Target is what the fault resolved to (for example the member that led).
func (in *Injection) Target() string { return in.target }

// AlreadyGone reports, for an expire-lease, that the server had ended the
// lease before the fault came to end it.
func (in *Injection) AlreadyGone() bool { return in.gone }

// SetTarget says what the fault resolved to.
func (in *Injection) SetTarget(t string) { in.target = t }

// SetUndo says how to undo the fault.
func (in *Injection) SetUndo(undo func(context.Context) error) { in.undo = undo }

// SetAlreadyGone says, for an expire-lease, that the server had ended the
// lease before the fault came to end it.
func (in *Injection) SetAlreadyGone() { in.gone = true }

// KeepOpen says nothing will undo the fault (a member that never comes
// back in the run): its window stays open to the end of the history.
func (in *Injection) KeepOpen() { in.open = true }

// Undo reverses the fault and closes its window on the timeline. Undoing
// twice does nothing more; the second call returns the first call's error.
func (in *Injection) Undo(ctx context.Context) error {
	in.once.Do(func() {
		if in.undo != nil {
			in.err = in.undo(ctx)
		}
		in.w.rec.RecordFault(Event{ID: in.id, Phase: End, Fault: in.fault, Target: in.target, Err: in.err, AlreadyGone: in.gone})
		in.w.forget(in)
	})
	return in.err
}

// Apply applies f with do and returns once do has: its window opens on the
// timeline before anything is done, and closes when it is undone — at once
// for a fault with nothing to undo. If applying fails, the window closes
// at once with the error, and whatever part was done is undone.
func (w *Windows) Apply(ctx context.Context, f Fault, do Applier) (*Injection, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.nextID++
	in := &Injection{w: w, id: w.nextID, fault: f}
	w.mu.Unlock()
	w.rec.RecordFault(Event{ID: in.id, Phase: Start, Fault: f})
	if err := do(ctx, in); err != nil {
		err = fmt.Errorf("%s: %w", f, err)
		if in.undo != nil {
			err = errors.Join(err, in.undo(context.WithoutCancel(ctx)))
		}
		in.once.Do(func() {
			in.err = err
			w.rec.RecordFault(Event{ID: in.id, Phase: End, Fault: f, Target: in.target, Err: err, AlreadyGone: in.gone})
		})
		return nil, err
	}
	switch {
	case in.open:
	case in.undo == nil:
		// Nothing stays in place (a revoke, a restart, a leader move): the
		// window is the time the fault took, and closes now — a window left
		// open would claim the fault was still acting on what came after.
		in.Undo(ctx)
	default:
		w.mu.Lock()
		w.active = append(w.active, in)
		w.mu.Unlock()
	}
	return in, nil
}

// UndoAll undoes every active injection, newest first.
func (w *Windows) UndoAll(ctx context.Context) error {
	w.mu.Lock()
	active := slices.Clone(w.active)
	w.mu.Unlock()
	var errs []error
	for _, in := range slices.Backward(active) {
		errs = append(errs, in.Undo(ctx))
	}
	return errors.Join(errs...)
}

// Active lists the injections not yet undone, oldest first.
func (w *Windows) Active() []*Injection {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.active)
}

func (w *Windows) forget(in *Injection) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.active = slices.DeleteFunc(w.active, func(x *Injection) bool { return x == in })
}

// UndoAfter keeps the fault in place for d, or until ctx ends, then undoes
// it (a link that fails for a moment); it returns ctx's error if ctx ended
// first, and the undo's if that failed.
func (in *Injection) UndoAfter(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
	if err := in.Undo(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	return ctx.Err()
}
