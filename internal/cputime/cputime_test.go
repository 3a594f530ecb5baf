package cputime_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/cputime"
)

func TestSelfGrowsWithWork(t *testing.T) {
	before, err := cputime.Self()
	require.NoError(t, err)
	x := 0
	for i := range 50_000_000 {
		x += i % 7
	}
	after, err := cputime.Self()
	require.NoError(t, err)
	assert.Greater(t, after, before, "busy work (%d) used CPU", x)
}
