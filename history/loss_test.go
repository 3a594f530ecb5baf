package history_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
)

// A lease ended on time when it ended a TTL or more after its client's
// last keep-alive and no keep-alive came after it — counted from its
// grant when the grant was its one keep-alive (a failed try's lease);
// one ended before, renewed after, or whose last keep-alive was sent in
// time and never answered, did not.
func TestALeaseEndsOnTime(t *testing.T) {
	for _, c := range []struct {
		name string
		l    history.Loss
		want bool
	}{
		{"a TTL after its last keep-alive", history.Loss{RenewedAt: 100, TTL: 1000, Gone: 1150, Renewals: []int64{50, 100}}, true},
		{"a TTL after its grant, never renewed", history.Loss{TTL: 1000, Gone: 1060, Renewals: []int64{60}}, true},
		{"early", history.Loss{RenewedAt: 100, TTL: 1000, Gone: 900, Renewals: []int64{100}}, false},
		{"renewed after", history.Loss{RenewedAt: 100, TTL: 1000, Gone: 1150, Renewals: []int64{100, 700}}, false},
		{"nothing known", history.Loss{TTL: 1000, Gone: 1150}, false},
		{"its last keep-alive answered", history.Loss{RenewedAt: 100, TTL: 1000, Gone: 1150, AliveUntil: 1120,
			Renewals: []int64{50, 100}, KeptAlive: []int64{60, 120}}, true},
		// Sent while the lease lived, never answered, and nothing after
		// it: a starved server or client, not a lock that let go.
		{"its last keep-alive, in time, unanswered", history.Loss{RenewedAt: 3543, TTL: 1000, Gone: 5020, AliveUntil: 3789,
			Renewals: []int64{1990, 2507, 3543}, KeptAlive: []int64{1990, 2787}}, false},
	} {
		assert.Equal(t, c.want, c.l.EndedOnTime(), c.name)
	}
}
