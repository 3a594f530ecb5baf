package resource_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/lock/resource"
)

// kept is a resource a store keeps, as a store's package registers it.
type kept struct {
	resource.Unfenced
	key string
}

func (*kept) Name() string { return "kept-test" }

// A store's resource is made by name once registered, listed after the
// lab's own, refused twice; an unknown name lists what there is, and
// NewResource does not hang on it.
func TestAStoresResourceIsMadeByName(t *testing.T) {
	_, err := resource.NewResource("kept-test", "k")
	require.ErrorContains(t, err, `unknown resource "kept-test" (resources: unfenced, fenced`)
	resource.Register(resource.Kept{Name: "kept-test", Store: "test", NeedsToken: true,
		Make: func(key string) resource.Resource { return &kept{key: key} }})
	r, err := resource.NewResource("kept-test", "counter")
	require.NoError(t, err)
	assert.Equal(t, "counter", r.(*kept).key)
	assert.Equal(t, "kept-test", resource.Names()[len(resource.Names())-1])
	assert.Equal(t, []string{"unfenced", "fenced"}, resource.Names()[:2])
	k, ok := resource.KeptBy("kept-test")
	require.True(t, ok)
	assert.Equal(t, "test", k.Store)
	_, ok = resource.KeptBy("fenced")
	assert.False(t, ok, "the lab's own")
	assert.True(t, resource.NeedsToken("kept-test"))
	assert.True(t, resource.NeedsToken("fenced"))
	assert.False(t, resource.NeedsToken("unfenced"))
	assert.Panics(t, func() { resource.Register(resource.Kept{Name: "kept-test"}) })
	assert.Panics(t, func() { resource.Register(resource.Kept{Name: "fenced"}) })
}

// A fenced resource refuses a write whose token is older than one it has
// seen, on the read as on the write, and a grant without a token at all.
func TestFencedRefusesAStaleToken(t *testing.T) {
	ctx := context.Background()
	f := &resource.Fenced{}
	_, err := f.Read(ctx, nil, lock.Grant{})
	require.ErrorIs(t, err, lock.ErrNoToken)
	v, err := f.Read(ctx, nil, lock.Grant{Token: 10})
	require.NoError(t, err)
	_, err = f.Read(ctx, nil, lock.Grant{Token: 12})
	require.NoError(t, err)
	w, err := f.Write(ctx, nil, lock.Grant{Token: 10}, v+1)
	require.NoError(t, err)
	assert.False(t, w.Accepted)
	assert.Equal(t, resource.StaleToken, w.Rejection)
	w, err = f.Write(ctx, nil, lock.Grant{Token: 12}, v+1)
	require.NoError(t, err)
	assert.True(t, w.Accepted)
	assert.Equal(t, int64(1), f.Peek())
}

// The critical section reads, writes read+1 with the grant's token, and a
// stale holder's write is refused by a fenced store.
func ExampleCriticalSection() {
	ctx := context.Background()
	f := &resource.Fenced{}
	s, _ := resource.CriticalSection(ctx, f, nil, lock.Grant{Token: 7}, nil)
	fmt.Println(s.Read, s.Accepted)
	s, _ = resource.CriticalSection(ctx, f, nil, lock.Grant{Token: 5}, nil)
	fmt.Println(s.Read, s.Accepted, s.Reason)
	// Output:
	// 0 true
	// 1 false stale token 5 < 7
}
