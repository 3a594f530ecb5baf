package run_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/run"
)

// Tokens are labelled t1, t2… in order of first sight, the same token the
// same label; a grant with no token gets a label of its own each time.
func TestTokenLabels(t *testing.T) {
	var l run.TokenLabels
	var got []string
	for _, tok := range []int64{57, 0, 57, 0, 61} {
		got = append(got, l.Label(tok))
	}
	assert.Equal(t, []string{"t1", "t2", "t1", "t3", "t4"}, got)
}
