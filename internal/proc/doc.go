// Package proc runs a lock as a program of its own, whatever store the
// lock is on: it starts the program in a process group of its own, writes
// one command per line on its standard input, reads one answer per command
// from its standard output, freezes, continues, stops and kills the group,
// and starts the program again after it ended. What the answers mean is
// the store's: package lock reads an etcd grant from them, package
// lock/redislock a Redis one.
//
// Where things are:
//   - proc.go: Program, Answer, the start-up allowance and the offered tools
//   - program_linux.go: the processes (groups, signals, /proc)
//   - strays_linux.go: what a program started and left outside its group,
//     found by the mark it inherited, ended and reaped
//   - program_other.go: elsewhere, a Program that says it needs Linux
package proc
