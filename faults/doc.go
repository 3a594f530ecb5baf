// Package faults is the lab's nemesis, store by store: the things done to a
// store or a client to break a lock, as plain values.
//
// A Fault says what to do ("kill the leader", "pause c1 before its write").
// A store's backend applies it through Windows, resolving targets at that
// moment ("the leader" is m2): Windows records its start and end on the
// run's clock through a Recorder and returns an Injection whose Undo
// reverses it. Package etcdfaults applies faults to an embedded etcd
// cluster; each other store's run package applies its own. Waiting for
// what a fault did (a new leader, a lease gone) is the store's job:
// scenarios step on those facts, never on guessed sleeps.
//
// Where things are:
//   - fault.go: Kind, Fault, the catalog of kinds
//   - event.go: Recorder, Event (a window's edges)
//   - windows.go: Windows, Injection (apply and undo)
//   - history.go: ToHistory, the Recorder that writes into a history
package faults
