package reports

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
)

// Timeline geometry, in SVG user units.
const (
	tlLeft     = 60.0  // room for the lane labels
	tlWidth    = 900.0 // the run's duration
	tlFaultRow = 18.0  // height of one row of the fault band
	tlLane     = 46.0  // height of one client's lane
	tlAxis     = 34.0  // height of the time axis: a row of ticks, a row of shortened stretches
)

// timeline is one history drawn to scale: shapes the template renders.
type timeline struct {
	Width, Height float64
	Lanes         []lane
	Faults        []bar
	Overlaps      []bar // two clients believed they held the lock
	Ticks         []tick
	Breaks        []bar // stretches where nothing happened, drawn shorter than to scale
	BandHeight    float64
}

// lane is one client's row.
type lane struct {
	Client string
	Y      float64
	// Waiting, Holding (as the client believed), Valid (the server's lease
	// alive), Gone (held while the server had ended the lease).
	Waiting, Holding, Valid, Gone []bar
	Writes                        []mark
	Losses                        []mark
	// Callouts name what a reader must not miss: a rejected stale write,
	// a lost update.
	Callouts []callout
	// Summary counts the lane's grants ("5 holds"), under its name.
	Summary string
}

// callout is a short label on a white ground, beneath its mark.
type callout struct {
	X, Y, W float64
	Anchor  string // the text's anchor: start, middle or end
	Text    string
	Class   string
}

// bar is a span with its text and the raw history lines behind it.
type bar struct {
	X, W, Y, H float64
	Label      string
	LabelX     float64 // where a fault's label starts (inside its bar, or left of the drawing's edge)
	Title      string
}

// mark is a point event. Lost marks one of two accepted writes that
// wrote the same value.
type mark struct {
	X, Y  float64
	Ok    bool
	Lost  bool
	Title string
}

// tick is a label on the time axis, its text centred on X.
type tick struct {
	X, Y  float64
	Label string
}

// labelWidth is a generous estimate of how wide text of n characters is
// drawn in the axis's 10 px font, so that labels laid out apart never
// touch in a browser.
func labelWidth(n int) float64 { return 6.2*float64(n) + 4 }

// Limits that keep a full run's page light: a history longer than
// maxDrawn events is not drawn (its story and file are linked), and one
// longer than maxRaw shows descriptions without its raw lines on hover.
const (
	maxDrawn = 3000
	maxRaw   = 400
)

// buildTimeline lays out events. Times are the history's (ns since start).
func buildTimeline(events []history.Event) timeline {
	var end int64 = 1
	for _, e := range events {
		end = max(end, e.Time)
	}
	sc := newScale(events, end)
	x := sc.x
	raw, clients := rawLines(events)
	tl := timeline{Width: tlLeft + tlWidth + 20}

	// The fault band: a fault takes the first row free where its bar and
	// its label are drawn.
	var rowsEnd []float64
	for _, w := range history.FaultWindows(events) {
		if w.Open { // never ended: to the end of the history
			w.End = end
		}
		tl.Faults = append(tl.Faults, faultBar(w, &rowsEnd, x))
	}
	tl.BandHeight = float64(max(len(rowsEnd), 1)) * tlFaultRow
	top := tl.BandHeight + 8

	ops := history.Pair(events)
	losses := history.LeaseLosses(events)
	labels := tokenLabels(ops)
	byClient := map[string]*lane{}
	for i, c := range clients {
		tl.Lanes = append(tl.Lanes, lane{Client: c, Y: top + float64(i)*tlLane})
	}
	for i := range tl.Lanes {
		byClient[tl.Lanes[i].Client] = &tl.Lanes[i]
	}
	d := drawer{x: x, end: end, ops: ops, labels: labels, losses: losses}
	for _, op := range ops {
		if op.Op == history.CS && op.Type == history.Ok && op.Accepted != nil && !op.Synthetic {
			d.writes = append(d.writes, op)
		}
	}
	var holds []bar
	for i, op := range ops {
		l := byClient[op.Client]
		if l == nil || op.Synthetic {
			continue
		}
		title := strings.Join(raw[op.ID], "\n")
		switch op.Op {
		case history.Acquire:
			if hold, ok := d.acquire(l, i, title); ok {
				holds = append(holds, hold)
			}
		case history.CS:
			d.write(l, op, title)
		}
	}
	for _, e := range events {
		if l := byClient[e.Client]; l != nil && e.Type == history.LeaseLost {
			b, _ := json.Marshal(e)
			l.Losses = append(l.Losses, mark{X: x(e.Time), Y: l.Y + 28,
				Title: fmt.Sprintf("server: %s's lease %x ended (alive at %s, gone at %s)\n%s", e.Client, e.Lease, at(e.AliveUntil), at(e.Time), b)})
		}
	}
	for i := range tl.Lanes {
		tl.Lanes[i].finish()
	}
	tl.Overlaps = overlaps(holds, top, float64(len(clients))*tlLane)
	axisY := top + float64(len(clients))*tlLane + 4
	tl.Height = axisY + tlAxis
	tl.Ticks, tl.Breaks = sc.ticks(top, axisY-top, tl.Height-20, tl.Height-6)
	return tl
}

// rawLines are the history lines of each operation (by id: its invoke and
// completion), kept for hover text in a history of at most maxRaw events,
// and the clients in order of their first operation.
func rawLines(events []history.Event) (map[int][]string, []string) {
	raw := map[int][]string{}
	var clients []string
	for _, e := range events {
		if (e.Type == history.Invoke || e.IsCompletion()) && e.Client != "" {
			if len(events) <= maxRaw {
				b, _ := json.Marshal(e)
				raw[e.ID] = append(raw[e.ID], string(b))
			}
			if !slices.Contains(clients, e.Client) {
				clients = append(clients, e.Client)
			}
		}
	}
	return raw, clients
}

// finish lays out the lane's callouts apart and counts its holds.
func (l *lane) finish() {
	l.Callouts = apart(l.Callouts)
	if n := len(l.Holding); n == 1 {
		l.Summary = "1 hold"
	} else if n > 1 {
		l.Summary = fmt.Sprintf("%d holds", n)
	}
}

// drawer draws one history's operations on their lanes.
type drawer struct {
	x      func(int64) float64
	end    int64
	ops    []history.Operation
	labels map[int64]string
	losses []history.Loss
	writes []history.Operation // the critical sections whose write was judged
}

// acquire draws ops[i], an acquire, on l: the wait, and for a grant the
// hold as its client believes it and the server's view of its lease
// beneath. It returns the hold bar, if the acquire was granted.
func (d drawer) acquire(l *lane, i int, title string) (bar, bool) {
	x, op := d.x, d.ops[i]
	ret := op.Return
	if ret == history.Infinity {
		// Unknown: it may take effect any time, but its client stopped
		// waiting when it heard so (if it did).
		ret = cmp.Or(op.Answered, d.end)
	}
	wait := bar{X: x(op.Call), W: x(ret) - x(op.Call), Y: l.Y + 4, H: 18, Title: "waiting: " + title}
	wait.Label = fitting(wait.W, waitLabels(op, ret)...)
	l.Waiting = append(l.Waiting, wait)
	if op.Type != history.Ok {
		return bar{}, false
	}
	stop := releaseCall(d.ops[i+1:], op.Client, d.end)
	label := d.labels[op.Token]
	hold := bar{X: x(op.Return), W: max(x(stop)-x(op.Return), 1), Y: l.Y + 4, H: 18,
		Title: fmt.Sprintf("%s holds %s (as it believes) from %s to %s\n%s", op.Client, label, at(op.Return), at(stop), title)}
	hold.Label = fitting(hold.W, label) // white on the bar; a bar too short for it keeps it in its hover text
	l.Holding = append(l.Holding, hold)
	// The server's view of the grant's lease, beneath.
	validEnd, goneAt := stop, int64(-1)
	if loss, ok := history.LossOf(op, d.losses); ok && loss.AliveUntil < stop {
		validEnd = max(loss.AliveUntil, op.Return)
		if loss.Gone < stop {
			goneAt = max(loss.Gone, op.Return)
		}
	}
	l.Valid = append(l.Valid, bar{X: x(op.Return), W: max(x(validEnd)-x(op.Return), 1), Y: l.Y + 25, H: 6,
		Title: fmt.Sprintf("server: %s's lease alive (%s valid) until at least %s", op.Client, label, at(validEnd))})
	if goneAt >= 0 {
		l.Gone = append(l.Gone, bar{X: x(goneAt), W: max(x(stop)-x(goneAt), 1), Y: l.Y + 25, H: 6,
			Title: fmt.Sprintf("server: %s's lease was gone from %s — %s still believed it held %s", op.Client, at(goneAt), op.Client, label)})
	}
	return hold, true
}

// waitLabels are the labels of an acquire's wait that ended at ret, the
// longest first: how long it waited and how it ended.
func waitLabels(op history.Operation, ret int64) []string {
	d := at(ret - op.Call)
	switch op.Type {
	case history.Ok:
		return []string{"waited " + d, d}
	case history.Fail:
		return []string{"not granted after " + d, "not granted", d}
	default:
		return []string{"no answer after " + d, "no answer", d}
	}
}

// fitting is the first of labels that fits inside a bar w wide, or "".
func fitting(w float64, labels ...string) string {
	for _, l := range labels {
		if w >= labelWidth(len([]rune(l)))+2 {
			return l
		}
	}
	return ""
}

// write draws a critical section's write on l, accepted or rejected; a
// rejected write is labelled with the tokens that decided it, and each
// write of a lost update is marked and labelled.
func (d drawer) write(l *lane, op history.Operation, title string) {
	if op.Type != history.Ok || op.Accepted == nil {
		return
	}
	t := writeTime(op)
	what := "write accepted"
	if !*op.Accepted {
		what = "write REJECTED: " + op.Reason
	}
	m := mark{X: d.x(t), Y: l.Y + 13, Ok: *op.Accepted,
		Title: fmt.Sprintf("%s %s (token %s, read %s)\n%s", op.Client, what, d.labels[op.Token], value(op.Value), title)}
	switch {
	case !*op.Accepted:
		l.Callouts = append(l.Callouts, d.callout(m.X, l.Y, d.rejection(op, t), "cbad"))
	case op.Value != nil:
		others := d.sameValue(op)
		if len(others) > 0 {
			m.Lost = true
			text := fmt.Sprintf("lost update: %s also wrote %d", strings.Join(others, ", "), *op.Value+1)
			l.Callouts = append(l.Callouts, d.callout(m.X, l.Y, text, "clost"))
		}
	}
	l.Writes = append(l.Writes, m)
}

// writeTime is when a critical section's write was sent, or its return.
func writeTime(op history.Operation) int64 {
	if op.WriteAt != 0 {
		return op.WriteAt
	}
	return op.Return
}

// rejection names why the store rejected op's write: the newest token it
// had accepted before ("rejected: t1 < t2"), else its own reason.
func (d drawer) rejection(op history.Operation, at int64) string {
	var newest int64
	for _, w := range d.writes {
		if *w.Accepted && writeTime(w) < at && w.Token > newest {
			newest = w.Token
		}
	}
	if newest > op.Token && d.labels[op.Token] != "" && d.labels[newest] != "" {
		return fmt.Sprintf("rejected: token %s < %s", d.labels[op.Token], d.labels[newest])
	}
	reason := op.Reason
	if len(reason) > 40 {
		reason = reason[:40] + "…"
	}
	return "rejected: " + cmp.Or(reason, "stale")
}

// sameValue names the other clients whose accepted write read the value
// op read: each wrote the same number, and all but one update was lost.
func (d drawer) sameValue(op history.Operation) []string {
	var out []string
	for _, w := range d.writes {
		if w.ID != op.ID && *w.Accepted && w.Value != nil && *w.Value == *op.Value {
			out = append(out, w.Client)
		}
	}
	return out
}

// callout places text beneath a mark at x in the lane at y, inside the
// drawing: anchored at its start, or at its end near the right edge.
func (d drawer) callout(x, y float64, text, class string) callout {
	w := 5.8*float64(len([]rune(text))) + 6 // the callout's bold 10 px
	c := callout{X: x, Y: y + 44, W: w, Anchor: "start", Text: text, Class: class}
	if x+w > tlLeft+tlWidth+14 {
		c.Anchor = "end"
	}
	return c
}

// faultBar draws w in the first row of the band where nothing drawn yet
// reaches its start; rowsEnd holds where each row's last bar or label ends.
// A label wider than its bar runs on past it, and the row is taken until
// the label ends, so that narrow faults close together never write over
// each other's names.
func faultBar(w history.FaultWindow, rowsEnd *[]float64, x func(int64) float64) bar {
	name := w.Name()
	if w.Target != "" && !slices.Contains(strings.Fields(name), w.Target) {
		name += " → " + w.Target // what it resolved to ("kill-leader → m2")
	}
	start, width := x(w.Start), max(x(w.End)-x(w.Start), 2)
	// The label starts inside the bar, or ends at the drawing's right edge.
	lw := labelWidth(len([]rune(name)))
	lx := min(start+3, tlLeft+tlWidth+18-lw)
	row := slices.IndexFunc(*rowsEnd, func(end float64) bool { return end < min(start, lx) })
	if row < 0 {
		row = len(*rowsEnd)
		*rowsEnd = append(*rowsEnd, 0)
	}
	(*rowsEnd)[row] = max(start+width, lx+lw)
	b, _ := json.Marshal(w.Spec)
	title := fmt.Sprintf("fault %s from %s to %s\n%s", name, at(w.Start), at(w.End), b)
	if w.Err != "" {
		title += "\nerror: " + w.Err
	}
	return bar{X: start, W: width, Y: float64(row) * tlFaultRow, H: tlFaultRow - 3, Label: name, LabelX: lx, Title: title}
}

// apart keeps the callouts that do not cover one drawn before them, in
// order along the lane: a crowded lane keeps its first labels, and every
// mark keeps its hover text.
func apart(cs []callout) []callout {
	var out []callout
	span := func(c callout) (float64, float64) {
		switch c.Anchor {
		case "end":
			return c.X - c.W, c.X
		case "middle":
			return c.X - c.W/2, c.X + c.W/2
		}
		return c.X, c.X + c.W
	}
	for _, c := range cs {
		a0, a1 := span(c)
		if !slices.ContainsFunc(out, func(o callout) bool { b0, b1 := span(o); return a0 < b1+4 && b0 < a1+4 }) {
			out = append(out, c)
		}
	}
	return out
}

// releaseCall is when client began to release its grant: its next release
// call in later, or end.
func releaseCall(later []history.Operation, client string, end int64) int64 {
	for _, op := range later {
		if op.Client != client {
			continue
		}
		if op.Op == history.Release && !op.Synthetic {
			return op.Call
		}
		if op.Op == history.Acquire {
			return op.Call
		}
	}
	return end
}

// overlaps finds the spans where holding bars of different lanes overlap.
func overlaps(holds []bar, top, height float64) []bar {
	var out []bar
	for i, a := range holds {
		for _, b := range holds[i+1:] {
			if a.Y == b.Y {
				continue
			}
			from, to := math.Max(a.X, b.X), math.Min(a.X+a.W, b.X+b.W)
			if to-from > 0.5 {
				out = append(out, bar{X: from, W: to - from, Y: top, H: height,
					Title: "two clients believed they held the lock here"})
			}
		}
	}
	return out
}

// tokenLabels names tokens t1, t2… in order of first grant.
func tokenLabels(ops []history.Operation) map[int64]string {
	out := map[int64]string{}
	sorted := slices.Clone(ops)
	slices.SortStableFunc(sorted, func(a, b history.Operation) int { return cmp.Compare(a.Return, b.Return) })
	for _, op := range sorted {
		if op.Op == history.Acquire && op.Type == history.Ok && op.Token != 0 {
			if _, ok := out[op.Token]; !ok {
				out[op.Token] = fmt.Sprintf("t%d", len(out)+1)
			}
		}
	}
	return out
}

// at formats a history time.
func at(t int64) string {
	d := time.Duration(t)
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	default:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
}

func value(v *int64) string {
	if v == nil {
		return "?"
	}
	return fmt.Sprint(*v)
}
