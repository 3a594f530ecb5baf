// Package serverproc is a server process the lab started and owns (a
// database server): started to die with the lab (internal/deathsig), its
// last output kept for errors, killed or stopped and waited for, and told
// apart from one that exited on its own.
//
// Where things are:
//   - serverproc.go: Proc — Start, Died, Kill, Stop, Pid
//   - cpu.go: CPUOf, a process's CPU time read from /proc
package serverproc
