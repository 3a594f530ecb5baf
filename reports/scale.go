package reports

import (
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/history"
)

// breakWidth is how wide a stretch where nothing happened is drawn.
const breakWidth = 36.0

// scale maps history time to x: linear, except that a long stretch in
// which no event happens (a pause, a lease running out, a slow holder's
// work) is drawn breakWidth wide and labelled with its real length, so the
// moments where things happen get the room.
type scale struct {
	segs []segment
}

type segment struct {
	t0, t1 int64
	x0, x1 float64
	broken bool
}

func newScale(events []history.Event, end int64) scale {
	// The stretch before the first thing drawn (clients connecting) is
	// shortened like any idle stretch.
	first := end
	for _, e := range events {
		if drawn(e) {
			first = min(first, e.Time)
		}
	}
	if first <= int64(time.Millisecond) {
		first = 0
	}
	times := []int64{first, end}
	for _, e := range events {
		if e.Time >= first {
			times = append(times, e.Time)
		}
	}
	slices.Sort(times)
	times = slices.Compact(times)
	cut := max(end/8, int64(100*time.Millisecond)) // a gap longer than this is drawn short
	var gaps [][2]int64
	if first > 0 {
		gaps = append(gaps, [2]int64{0, first})
	}
	var linear int64
	prev := times[0]
	for _, t := range times[1:] {
		if t-prev > cut {
			gaps = append(gaps, [2]int64{prev, t})
		} else {
			linear += t - prev
		}
		prev = t
	}
	perNs := (tlWidth - breakWidth*float64(len(gaps))) / float64(max(linear, 1))
	var sc scale
	t, xx := int64(0), tlLeft
	for _, g := range append(gaps, [2]int64{end, end}) {
		if g[0] > t {
			w := float64(g[0]-t) * perNs
			sc.segs = append(sc.segs, segment{t0: t, t1: g[0], x0: xx, x1: xx + w})
			xx += w
		}
		if g[1] > g[0] {
			sc.segs = append(sc.segs, segment{t0: g[0], t1: g[1], x0: xx, x1: xx + breakWidth, broken: true})
			xx += breakWidth
		}
		t = g[1]
	}
	return sc
}

// drawn reports whether the timeline draws e: a client's operation, a
// fault, a lease's end.
func drawn(e history.Event) bool {
	switch {
	case e.Type == history.Invoke || e.IsCompletion():
		return e.Client != ""
	case e.Type == history.FaultStart, e.Type == history.LeaseLost:
		return true
	}
	return false
}

func (sc scale) x(t int64) float64 {
	for _, s := range sc.segs {
		if t <= s.t1 {
			if t <= s.t0 || s.t1 == s.t0 {
				return s.x0
			}
			return s.x0 + (s.x1-s.x0)*float64(t-s.t0)/float64(s.t1-s.t0)
		}
	}
	if len(sc.segs) == 0 {
		return tlLeft
	}
	return sc.segs[len(sc.segs)-1].x1
}

// ticks labels the axis: a row of times, evenly within the stretches
// drawn to scale, above a row naming each shortened stretch's length.
// Labels that would touch one already placed in their row are left out
// (every break keeps its length in its hover text).
func (sc scale) ticks(top, height, rowTimes, rowBreaks float64) (ticks []tick, breaks []bar) {
	var linear int64
	for _, s := range sc.segs {
		if !s.broken {
			linear += s.t1 - s.t0
		}
	}
	step := niceStep(linear)
	rightOf := map[float64]float64{rowTimes: -1e9, rowBreaks: -1e9}
	place := func(x, y float64, label string) {
		w := labelWidth(len(label))
		if x-w/2 < rightOf[y]+4 {
			return
		}
		ticks = append(ticks, tick{X: x, Y: y, Label: label})
		rightOf[y] = x + w/2
	}
	for _, s := range sc.segs {
		if s.broken {
			breaks = append(breaks, bar{X: s.x0, W: s.x1 - s.x0, Y: top, H: height,
				Title: fmt.Sprintf("nothing happened from %s to %s: drawn shorter than to scale", at(s.t0), at(s.t1))})
			place((s.x0+s.x1)/2, rowBreaks, "+"+at(s.t1-s.t0))
			continue
		}
		for t := (s.t0 + step - 1) / step * step; t <= s.t1; t += step {
			place(sc.x(t), rowTimes, at(t))
		}
	}
	return ticks, breaks
}

// niceStep picks a tick spacing giving 5 to 12 ticks.
func niceStep(end int64) int64 {
	for _, s := range []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
		100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second,
		5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute} {
		if end/int64(s) <= 12 {
			return int64(s)
		}
	}
	return int64(5 * time.Minute)
}
