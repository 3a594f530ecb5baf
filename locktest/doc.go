// Package locktest gates a lock from its own `go test`: one call runs the
// lab's scenarios against the lock on a real etcd cluster (embedded by
// default), each scenario and resource as a subtest, and fails the test
// with the verdict's explanation, the seed, the command that replays the
// schedule and the report's path.
//
// The defaults cannot lie: the resources are the ones a correct lock must
// keep safe (fenced, etcd-guarded); every scenario's least progress and its
// effects are enforced (a run that did nothing, or whose fault never took
// effect, is an error, never a pass); a skipped scenario says why. A
// scenario documented to FAIL on an unfenced resource — the lesson that a
// lease is not a lock — is reported as a finding in the log, not as a
// failure, when that resource is asked for. Beside the catalog, a bounded
// exploration (package explore) draws scenario scripts against the lock and
// shrinks any that breaks it.
package locktest
