package run

import (
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/lock/process"
)

// QueueWait is how long wait-queued waits for l's client to be seen
// waiting: faults.DefaultWait, and a lock run as a process that is still
// starting (it has not said it is up) its start-up allowance besides —
// an interpreter starting on a busy machine is not the lock's waiting.
func QueueWait(l any) time.Duration {
	if p, ok := l.(process.Program); ok && p.Starting() {
		return faults.DefaultWait + process.StartupAllowance
	}
	return faults.DefaultWait
}
