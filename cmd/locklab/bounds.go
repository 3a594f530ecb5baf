package main

import "time"

// The bounds of the count, size and duration flags, each stated in its
// flag's help: a value past one is a usage error, never a run that eats
// the machine.
const (
	// maxRuns bounds run's --runs: a thousand seeds of a lesson is a
	// campaign of days.
	maxRuns = 1000
	// maxParallel bounds run's --parallel: each configuration at once
	// starts servers of its own.
	maxParallel = 64
	// maxCases bounds explore's --cases, maxSteps its --steps.
	maxCases = 100_000
	maxSteps = 100
	// maxShrink bounds explore's --shrink-time.
	maxShrink = time.Hour
	// maxBenchClients bounds each of bench's --clients: every client is a
	// connection of its own, started before the measurement.
	maxBenchClients = 1000
	// maxBenchDuration bounds bench's --duration and --work.
	maxBenchDuration = 10 * time.Minute
)
