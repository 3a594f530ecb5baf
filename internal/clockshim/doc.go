// Package clockshim moves a server's wall clock, or a lock program's: a
// small C library (the shim, csrc/shim.c), preloaded into a process the
// lab starts, offsets what it reads of CLOCK_REALTIME, gettimeofday and
// time by milliseconds the lab writes into a file of the process's
// (Clock.Jump), and runs it fast or slow from a moment on (Clock.Drift);
// monotonic clocks are left alone. The shim is built from source with the system's C
// compiler at first use and kept in the user's cache directory; where
// there is no compiler, Build says so in one line.
//
// It works on programs that read the clock through the C library (Redis,
// PostgreSQL, a JVM). A Go program reads it through the vDSO, past any
// preloaded library, so a Go server's clock (etcd's) cannot be moved so.
//
// Where things are:
//   - clockshim.go: Build (the shim, compiled once and cached) and Clock —
//     New, Env (what a server's environment needs), Jump, Drift, Reset,
//     Offset
//   - csrc/shim.c: the shim itself, embedded and compiled by Build
package clockshim
