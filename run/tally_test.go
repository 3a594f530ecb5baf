package run

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// After a member fault, the member's clients ask first: the others wait
// before their next cycle until the gate opens, however often they would
// have won the race.
func TestRejoiningClientsGoFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sections := newTally()
	open := sections.first([]string{"c2"})
	var others atomic.Int64
	stop := loop(ctx, []string{"c1", "c2", "c3"}, sections, func(name string) bool {
		if name != "c2" {
			others.Add(1)
		}
		time.Sleep(time.Millisecond) // a cycle's work
		return true
	})
	sections.waitEach(ctx, []string{"c2"}, time.Minute)
	sections.waitFor(ctx, 20, time.Minute)
	assert.Zero(t, others.Load(), "no other client started a cycle while the gate was shut")
	open()
	sections.waitEach(ctx, []string{"c1", "c3"}, time.Minute)
	stop()
	assert.Positive(t, sections.of("c1"))
	assert.Positive(t, sections.of("c3"))
}
