package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every check that can fail a lock says what to change; the belief (a
// finding) and the environment (the machine's doing) do not.
func TestEveryFailingCheckHasARemedy(t *testing.T) {
	for _, c := range []string{"tokens", "stale-writes", "counter", "validity", "expired-waiter", "lease-kept", "liveness", "progress"} {
		assert.NotEmpty(t, Remedy(c), c)
	}
	for _, c := range []string{"mutex", "environment", "no-such-check"} {
		assert.Empty(t, Remedy(c), c)
	}
	assert.Contains(t, Remedy("liveness"), "An Acquire that returns an error must remove the key its session put")
}
