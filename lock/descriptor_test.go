package lock_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/lock"
)

// A store's lock list is found by name, and its known-bad locks are the
// ones with a regression, in order.
func TestDescriptorsAreFoundAndTheKnownBadListed(t *testing.T) {
	bad := &lock.Regression{Name: "b", Scenarios: []string{"contention"}, Check: "release"}
	ds := []lock.Descriptor[int]{{Name: "a"}, {Name: "b", Bad: bad}}
	d, ok := lock.Find(ds, "b")
	assert.True(t, ok)
	assert.Equal(t, "b", d.Name)
	_, ok = lock.Find(ds, "c")
	assert.False(t, ok)
	assert.Equal(t, []lock.Regression{*bad}, lock.Regressions(ds))
	assert.Empty(t, lock.Regressions(ds[:1]))
}
