// Package pausegate is where a lab client's worker can be frozen, the way a
// long GC pause or SIGSTOP freezes a process: the worker passes named pause
// points, a pause arms the gate at one, and the worker stops there until it
// is resumed. The etcd clients (cluster) and the run engine's (run/engine)
// share it.
//
// Where things are: pausegate.go, the Gate (arm, the pause points, wait,
// resume, kill).
package pausegate
