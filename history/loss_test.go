package history_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
)

// A lease ended on time when it ended a TTL or more after its client's
// last keep-alive and no keep-alive came after it — counted from its
// grant when the grant was its one keep-alive (a failed try's lease);
// one ended before, or renewed after, did not.
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
	} {
		assert.Equal(t, c.want, c.l.EndedOnTime(), c.name)
	}
}
