//go:build race

package scenarios_test

// raceBuilt: the race detector is on, and the etcdctl a lock process runs
// (this test binary) is race-built too.
const raceBuilt = true
