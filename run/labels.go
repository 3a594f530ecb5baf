package run

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// TokenLabels names fencing tokens t1, t2… in order of first appearance,
// so a script's output is the same run after run whatever the store's
// numbers. A grant with no token (a lock that gives none, as the contract
// allows) gets the next label of its own: a script names it as it would a
// token's grant. The zero value is ready; it is safe for concurrent use.
type TokenLabels struct {
	mu sync.Mutex
	n  map[int64]int
	// given is how many labels were given.
	given int
}

// Label is t's label; for no token (zero), a label never given before.
func (l *TokenLabels) Label(t int64) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = map[int64]int{}
	}
	n, ok := l.n[t]
	if !ok || t == 0 {
		l.given++
		n = l.given
		if t != 0 {
			l.n[t] = n
		}
	}
	return fmt.Sprintf("t%d", n)
}

// Work waits for d, or until ctx ends: a holder's work in its critical
// section, which its lease must outlive.
func Work(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Reports checks each history, judged against minimum: one report per
// resource, in order.
func Reports(minimum *history.Minimum, histories ...[]history.Event) ([]models.Report, error) {
	out := make([]models.Report, len(histories))
	for i, events := range histories {
		r, err := models.Check(history.Header{Minimum: minimum}, events, models.DefaultTimeout)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}
