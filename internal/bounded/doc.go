// Package bounded reads files the lab did not write itself — a scenario
// file, a schedule, a history, a shard's results — through a size limit,
// and only when they are regular files: a device (/dev/zero), a FIFO or a
// file larger than its limit is one error naming it, never a read that
// eats the machine.
//
// Where things are: bounded.go, ReadFile and Open.
package bounded
