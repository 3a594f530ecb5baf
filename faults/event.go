package faults

import (
	"time"

	"github.com/locklab/locklab/history"
)

// DefaultWait bounds a wait on an observable condition (a worker reaching
// its pause point, the server dropping a lease) that names no bound of its
// own: one that never comes must not hang a run.
const DefaultWait = 10 * time.Second

// Phase says whether an Event opens or closes a fault's window.
type Phase string

// The two phases of a fault on the timeline.
const (
	Start Phase = "start"
	End   Phase = "end"
)

// Event is one edge of a fault's window on the run's timeline. The Recorder
// stamps it with the run's clock, the same clock as the operations.
type Event struct {
	// ID pairs a start with its end; IDs count from 1 in apply order.
	ID    int
	Phase Phase
	Fault Fault
	// Target is what the fault resolved to when applied: the member that
	// "the leader" was, the point a pause stopped at.
	Target string
	// Err is set when applying or undoing failed; the window is then closed.
	Err error
	// AlreadyGone (expire-lease) says the server had ended the lease before
	// the fault came to end it.
	AlreadyGone bool
}

// Spec is the fault as a history records it.
func (e Event) Spec() history.FaultSpec {
	s := e.Fault.Spec()
	s.AlreadyGone = e.AlreadyGone
	return s
}

// Recorder receives fault events. The history package implements it; a
// Recorder must be safe for concurrent use and must not block for long.
type Recorder interface {
	RecordFault(Event)
}

// RecorderFunc adapts a function to Recorder.
type RecorderFunc func(Event)

// RecordFault calls f(e).
func (f RecorderFunc) RecordFault(e Event) { f(e) }
