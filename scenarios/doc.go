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
//   - env.go: Env, one run — clients, lockers, three resources, three
//     histories on one clock, the lease monitor
//   - script.go: the script format and its commands
package scenarios
