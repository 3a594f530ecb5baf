// Package scenarios turns the lab's parts into runs: a scenario is a lesson,
// its parameters, a schedule derived only from a seed, and the verdict each
// lock × resource is expected to get.
//
// Deterministic scenarios are scripts (scripts/*.txt, the datadriven
// format): narrated steps, one command each, with the expected stable output
// under it. `go test ./scenarios -rewrite` regenerates the expectations. Each
// command is one handler calling an exported Env method, so the same steps can
// be driven from Go.
//
// Where things are:
//   - catalog.go: the catalog (Scenario, Lookup, Plan, Execute); userscript.go:
//     a scenario from a user's file (FromScript)
//   - workload.go: contention, slow holders, the member-fault hold, drawn
//     scripts run as the plan lists them
//   - env.go: Env, one run — clients, lockers, three resources, three
//     histories on one clock; envops.go: one client's acquire, critical
//     section and release; envfault.go: pauses, crashes and faults named by
//     the run's clients; envlease.go: the leases the lab follows, the lease
//     monitor and the stall watcher
//   - script.go: the script format and its commands
//   - walk.go: drawn scripts (Walk, DrawScript), for exploration and the
//     random scenario
//   - effects.go: each scenario's claimed effects, as data (package models
//     judges them), and their counts over a run
//   - runner.go: Run — configurations in parallel, histories and results
//     written, each judged by models.Judge against its expectation
package scenarios
