package zkd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server's ports are distinct and, where the kernel says its ephemeral
// range, below it: none is one the kernel may hand out meanwhile.
func TestServerPortsAreDrawnBelowTheEphemeralRange(t *testing.T) {
	ports, err := freePorts(30)
	require.NoError(t, err)
	seen := map[int]bool{}
	lo, hi := belowEphemeral()
	for _, p := range ports {
		assert.False(t, seen[p], "port %d given twice", p)
		seen[p] = true
		if hi > lo {
			assert.True(t, p >= lo && p < hi, "port %d outside [%d, %d)", p, lo, hi)
		}
	}
}
