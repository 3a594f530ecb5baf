package run

import (
	"context"
	"time"

	"github.com/locklab/locklab/internal/cpupressure"
)

// stallTick is how often the stall watcher runs; a gap of stallGap or more
// between two of its runs is recorded as a stall of the lab.
const (
	stallTick = 20 * time.Millisecond
	stallGap  = 250 * time.Millisecond
)

// WatchStalls notes, until ctx ends, every stretch in which the lab's own
// process ran nothing (a tick that came late by a stall's length), calling
// stalled with its start: every client stood still then, and a lease that
// lapsed meanwhile says nothing about the lock (history.ObservedStalled).
func WatchStalls(ctx context.Context, stalled func(from time.Time)) {
	everyTick(ctx, stallTick, func(last, now time.Time) {
		if now.Sub(last) >= stallGap {
			stalled(last)
		}
	})
}

// everyTick calls f with the previous tick's time and this one's, every
// interval until ctx ends.
func everyTick(ctx context.Context, interval time.Duration, f func(last, now time.Time)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		f(last, now)
		last = now
	}
}

// starvedTick is how often the CPU starvation watcher samples the
// machine's CPU pressure; an interval in which tasks waited for a CPU
// starvedShare of the time or more is recorded as starved.
const (
	starvedTick  = time.Second
	starvedShare = 0.5
)

// WatchStarved notes, until ctx ends, every interval in which the
// machine's CPUs were oversubscribed (see cpupressure, and
// history.ObservedStarved), calling starved with its start. Where the
// machine does not tell its CPU pressure, it notes nothing.
func WatchStarved(ctx context.Context, starved func(from time.Time)) {
	s := cpupressure.NewSampler()
	if _, err := cpupressure.Read(); err != nil {
		return
	}
	s.Sample(time.Now())
	everyTick(ctx, starvedTick, func(last, now time.Time) {
		if share, ok := s.Sample(now); ok && share >= starvedShare {
			starved(last)
		}
	})
}
