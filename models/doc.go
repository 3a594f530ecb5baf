// Package models turns a history into verdicts: Porcupine linearizability
// models and direct checks with exact evidence.
//
// Two questions, two kinds of check (see docs/verdicts.md):
//   - safety — did the protected resource stay correct? The critical-section
//     counter model (each critical section an atomic increment), fencing
//     tokens that only grow, no accepted write with a stale token (write by
//     write), holder validity windows (grant → release or server-side loss of
//     the grant's lease) that never overlap, no grant on an ended lease, no
//     grant to a waiter whose lease ended while it waited. These, with the
//     liveness check (after the last fault, no acquire waits past the
//     scenario's bound while nobody is granted: a lock kept for nobody),
//     the hand-off check (no waiter is left ungranted while the lock is
//     free: handoff.go) and
//     the minimum-progress check, set a run's verdict.
//   - belief — did two clients ever believe they held the lock at once? The
//     mutex model. Under long pauses any lease-based lock says yes; that is a
//     finding to report, not a failure.
//
// Where things are:
//   - verdict.go: Result, Verdict, Worst
//   - porcupine.go: the one typed wrapper over Porcupine's interface{} API
//   - mutex.go, counter.go: the two models
//   - direct.go: token, stale-write, validity-window and expired-waiter checks
//   - leasekept.go: a lease lost while no fault or stall excuses it (a blip
//     of the holder's own link only if it could have starved the lease)
//   - deadline.go, told.go: the contract's promises — Acquire answers by
//     its deadline, Grant.Lost closes once a held grant's lease ends
//   - environment.go, stalls.go, bystander.go: what the environment did (a
//     renewed lease lapsed, the lab stood still; a fault that cannot reach
//     a client's lease does not excuse its lapse there); givenup.go: a
//     lease its lock gave up, rightly, when no keep-alive was answered for
//     a TTL
//   - progress.go: minimum progress, liveness after the last fault (a wedge),
//     lost fraction; handoff.go: a waiter left waiting for a free lock
//   - check.go: Check, which runs them all on a history and its header
//   - effects.go, effectkinds.go, effectdeadline.go, effectwaiting.go: what a scenario claims happens (the
//     header's history.Effect data), judged from the history alone
//   - judge.go: Judge and JudgeHistory, the last word — verdict, and whether
//     it is the documented one (the header's Expect) — for a run as for
//     `locklab check` of its file
//
// This package imports nothing of etcd.
package models
