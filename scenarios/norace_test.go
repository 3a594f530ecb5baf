//go:build !race

package scenarios_test

// raceBuilt: the race detector is on (see race_test.go).
const raceBuilt = false
