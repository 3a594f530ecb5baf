// Package history records what happened in a run and reads it back: every
// invocation and completion of a client's operation, every fault's start and
// end, every lease the server was seen to drop, on one monotonic clock that
// starts with the run.
//
// A history file is JSON Lines: a Header line, then one Event per line,
// written through a temporary file and renamed into place when complete, so a
// file with the final name is never half written. ReadFile validates a file and
// names the line at fault. Pair turns events into Operations (an invocation
// with its completion) for the checkers in package models; FaultWindows
// turns fault events into windows, each with its typed FaultSpec — the one
// place faults are paired. This package imports nothing of etcd: a history
// can be checked offline.
//
// The file format is versioned (FormatVersion). Version 2 records each fault
// as a FaultSpec beside its name; version 1 files, which named faults only,
// still read, their names read back as specs.
//
// Where things are:
//   - event.go: Header, Event, the types and operations; Classify
//   - recorder.go: Recorder, safe for concurrent clients
//   - codec.go: Writer (atomic file), ReadFile, Decode, Scanner; validate.go: the rules
//   - ops.go: Operation and Pair
//   - fault.go: FaultKind, FaultSpec, FaultWindow and FaultWindows
//   - promises.go: how long a lock has to keep the contract's promises
//     (DeadlineGrace, DeadlineWait, LostGrace)
package history
