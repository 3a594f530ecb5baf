package poll_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/poll"
)

func TestUntilReturnsOnceTrue(t *testing.T) {
	asks := 0
	err := poll.Until(t.Context(), "the third ask", time.Millisecond, func(context.Context) (bool, error) {
		asks++
		if asks < 3 {
			return false, errors.New("not yet")
		}
		return true, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 3, asks)
}

func TestUntilSaysWhatAndLastError(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	err := poll.Until(ctx, "never", time.Millisecond, func(context.Context) (bool, error) {
		return false, errors.New("member down")
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualError(t, err, "waiting for never: context deadline exceeded (last: member down)")
}
