package pgrun

import (
	"context"

	"github.com/locklab/locklab/run"
)

// Isolate is not available: one server has no peers to be cut off from.
func (e *Env) Isolate(context.Context, string) (run.Outcome, error) {
	return run.Outcome{}, e.NotHere("isolate", "one server has no peers to be cut off from")
}

// Kill is not available yet: a server killed takes every session, and
// every lock, with it.
func (e *Env) Kill(context.Context, string) (run.Outcome, error) {
	return run.Outcome{}, e.NotHere("kill", "the lab does not kill the server yet")
}
