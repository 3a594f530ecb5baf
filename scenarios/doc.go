// Package scenarios is the catalog and the runner: a scenario is a lesson,
// its parameters, a plan derived only from a seed, the effects it claims
// and the verdict each lock × resource is expected to get; Run runs
// configurations and judges each history through package models.
//
// Deterministic scenarios are scripts (scripts/*.txt, the format of package
// script): narrated steps, one command each, with the expected stable
// output under it. `go test ./scenarios -run Scripts -rewrite` regenerates
// the expectations. The others drive a workload of package run.
//
// Where things are:
//   - catalog.go: the catalog as data (Scenario, Lookup); plan.go: a
//     scenario's schedule from its seed and its execution (Plan, Execute);
//     kinds.go: which stores a lesson runs on and which kind of lock it is
//     a lesson for (Stores, LockKind, Scenario.NotFor);
//     userscript.go: a scenario from a user's file (FromScript);
//     timeouts.go: the lessons' own bounds (TTLs, operation timeouts)
//   - effects.go: each scenario's claimed effects, as data (package models
//     judges them), and their counts over a run
//   - attempts.go: a configuration run again when its environment, not its
//     lock, decided it (Attempts, Result.Environmental)
//   - runner.go: Run — configurations in parallel, histories and results
//     written, each judged by models.Judge against its expectation;
//     jobs.go: what a run's configurations are (another store's lessons
//     left out, Campaign.LeftOut)
//   - backend.go: a store beside etcd (Backend, Store, Engine; Redis's is
//     package redisstore, registered when imported); store.go: etcd's
package scenarios
