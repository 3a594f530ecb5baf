package follow_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/run/follow"
)

type watch struct {
	follow.Grant
	key string
}

func TestAGrantLostSaysItsRenewalsAndItsStart(t *testing.T) {
	t0 := time.Unix(100, 0)
	w := &watch{Grant: follow.Grant{Client: "c1", Token: 7, Lease: 3, LastAlive: t0}, key: "k"}
	for i := range 40 {
		w.Renewed(t0.Add(time.Duration(i) * time.Second))
	}
	w.Alive(t0.Add(38 * time.Second))
	w.Lock()
	end := w.Lose(time.Second, t0.Add(-time.Second))
	w.Unlock()
	assert.Equal(t, "c1", end.Client)
	assert.Equal(t, int64(3), end.Lease)
	assert.Equal(t, t0.Add(38*time.Second), end.LastAlive)
	assert.Equal(t, t0.Add(38*time.Second), end.LastRenewal, "the last renewal is the last one sent by the last sighting")
	require.Len(t, end.Renewals, 33, "the grant's start, then the latest 32 renewals")
	assert.Equal(t, t0.Add(-time.Second), end.Renewals[0])
	assert.Equal(t, t0.Add(8*time.Second), end.Renewals[1])
	assert.True(t, w.Ended())
	w.Renewed(t0.Add(time.Hour))
	assert.Len(t, w.Renewals, 32, "a grant no longer followed takes no renewal")
}

func TestAListFindsTheNewestGrantOfALease(t *testing.T) {
	var l follow.List[*watch]
	a := &watch{Grant: follow.Grant{Client: "c1", Lease: 5}, key: "a"}
	b := &watch{Grant: follow.Grant{Client: "c1", Lease: 5}, key: "b"}
	l.Add(a)
	l.Add(b)
	w, ok := l.Of(5)
	require.True(t, ok)
	assert.Equal(t, "b", w.key)
	_, ok = l.Of(6)
	assert.False(t, ok)

	looked := 0
	lost := l.Released(5, func(w *watch) {
		looked++
		w.Lock()
		w.Lose(time.Second, time.Time{})
		w.Unlock()
	})
	assert.True(t, lost, "the last look found its lease ended")
	assert.Equal(t, 1, looked)
	assert.Equal(t, []*watch{a}, l.Pending())
	assert.Len(t, l.All(), 2)

	gone, err := l.Gone(5, func(*watch) {})
	require.NoError(t, err)
	assert.True(t, gone)
	_, err = l.Gone(9, func(*watch) {})
	assert.ErrorIs(t, err, follow.ErrNotFollowed)
	assert.False(t, l.Released(9, func(*watch) { t.Fatal("nothing to look at") }))
}

// A keep-alive on a session renews every grant of that client's resting
// on it still followed, and no other.
func TestAKeepAliveRenewsTheGrantsOfItsSession(t *testing.T) {
	var l follow.List[*watch]
	on := &watch{Grant: follow.Grant{Client: "c1", Lease: 5}, key: "a"}
	other := &watch{Grant: follow.Grant{Client: "c1", Lease: 6}, key: "b"}
	theirs := &watch{Grant: follow.Grant{Client: "c2", Lease: 5}, key: "c"}
	ended := &watch{Grant: follow.Grant{Client: "c1", Lease: 5, Done: true}, key: "d"}
	for _, w := range []*watch{on, other, theirs, ended} {
		l.Add(w)
	}
	at := time.Unix(100, 0)
	l.Renewed("c1", 5, at)
	assert.Equal(t, []time.Time{at}, on.Renewals)
	assert.Empty(t, other.Renewals)
	assert.Empty(t, theirs.Renewals)
	assert.Empty(t, ended.Renewals)
}
