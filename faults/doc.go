// Package faults is the lab's nemesis: the things done to a cluster or a
// client to break a lock, as plain values.
//
// A Fault says what to do ("kill the leader", "pause c1 before its write");
// a Nemesis applies it to one cluster, resolving targets at that moment
// ("the leader" is m2), records its start and end on the run's clock through a
// Recorder, and returns an Injection whose Undo reverses it. A Condition is an
// observable state to wait for ("the server no longer has c1's lease"), so
// that scenarios step on facts, never on guessed sleeps. Generate derives a
// random Schedule from a seed alone, the same bytes every time.
//
// Where things are:
//   - fault.go: Kind, Fault, the catalog of kinds
//   - nemesis.go: Recorder, Event, Nemesis, Injection (apply and undo)
//   - condition.go: Condition and Await
//   - schedule.go: Schedule, Generate, Run
package faults
