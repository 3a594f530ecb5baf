package shards_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/internal/shards"
)

func TestCover(t *testing.T) {
	twice, missing := shards.Cover([]int{3, 1}, 3, []string{"c", "a"})
	assert.Empty(t, twice)
	assert.Equal(t, []string{"2/3"}, missing)
	twice, _ = shards.Cover([]int{1, 2, 1}, 3, []string{"a", "b", "c"})
	assert.Equal(t, "shard 1/3 given twice (a and c)", twice)
	twice, missing = shards.Cover([]int{0}, 0, []string{"whole"})
	assert.Empty(t, twice)
	assert.Empty(t, missing, "a run not split covers itself")
}
