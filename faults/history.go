package faults

import "github.com/locklab/locklab/history"

// ToHistory returns a Recorder that writes fault windows into a run's
// history, on the same clock as the clients' operations. (The adapter lives
// here because history must not depend on this package, which depends on etcd.)
func ToHistory(r *history.Recorder) Recorder {
	return RecorderFunc(func(e Event) {
		r.Fault(e.ID, e.Phase == Start, e.Spec(), e.Target, e.Err)
	})
}
