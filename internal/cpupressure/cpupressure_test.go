package cpupressure

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The "some" line's total is the pressure; anything else is an error
// that says what was wrong.
func TestParse(t *testing.T) {
	d, err := Parse([]byte("some avg10=0.00 avg60=0.44 avg300=8.83 total=19064296052\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	require.NoError(t, err)
	assert.Equal(t, 19064296052*time.Microsecond, d)
	for _, bad := range []string{"", "full total=3\n", "some total=x\n", "some total=-4\n"} {
		_, err := Parse([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

// A sample is the share of the interval the machine's tasks waited: none
// on the first call, none when the total cannot be read or went back.
func TestSampler(t *testing.T) {
	totals := []time.Duration{0, 500 * time.Millisecond, 3 * time.Second, time.Second}
	i := 0
	s := &Sampler{read: func() (time.Duration, error) { d := totals[i]; i++; return d, nil }}
	t0 := time.Unix(100, 0)
	_, ok := s.Sample(t0)
	assert.False(t, ok, "the first sample has nothing to compare with")
	share, ok := s.Sample(t0.Add(time.Second))
	assert.True(t, ok)
	assert.InDelta(t, 0.5, share, 1e-9)
	share, ok = s.Sample(t0.Add(2 * time.Second))
	assert.True(t, ok)
	assert.InDelta(t, 1, share, 1e-9, "a share is at most the whole interval")
	_, ok = s.Sample(t0.Add(3 * time.Second))
	assert.False(t, ok, "a total that went back")
}

// Where the kernel gives the pressure, two reads do not go back.
func TestRead(t *testing.T) {
	a, err := Read()
	if err != nil {
		t.Skipf("this machine gives no CPU pressure: %v", err)
	}
	b, err := Read()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, b, a)
}
