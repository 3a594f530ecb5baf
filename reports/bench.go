package reports

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/atomicfile"
)

// BenchFile is the name WriteBench writes, in its directory.
const BenchFile = "bench.html"

// Bench is a benchmark's results, as bench.html shows them.
type Bench struct {
	// Title heads the page; Command is the command line; Where says what
	// cluster it measured ("an embedded 3-member cluster, fsync off").
	Title, Command, Where string
	// Floor is the least a hand-off costs on that cluster: one committed
	// write and one linearizable read.
	Floor Latency
	// Rows are the measurements, lock by lock, clients ascending.
	Rows []BenchRow
}

// BenchRow is one measurement: one lock at one number of clients.
type BenchRow struct {
	Lock        string
	Clients     int
	LocksPerSec float64
	// Acquire is Acquire's call to return; Handoff a release to the next
	// grant.
	Acquire, Handoff Latency
	// SameClient, Wakeups, FutileWakeups and Requests are per grant.
	SameClient, Wakeups, FutileWakeups, Requests float64
	// ClientsCPU and ClusterCPU are per 1000 locks; CPUShared says the
	// cluster shared the clients' process (ClientsCPU is then both).
	ClientsCPU, ClusterCPU time.Duration
	CPUShared              bool
	// Error says why there are no numbers ("" if there are): "failed: …"
	// or "not measured: …".
	Error string
}

// Latency is a latency distribution.
type Latency struct {
	P50, P70, P90, P99 time.Duration
	// Samples are every latency measured, for the distribution's curve.
	Samples []time.Duration
}

//go:embed bench.html.tmpl
var benchText string

var benchPage = template.Must(template.New("bench").Funcs(template.FuncMap{
	"f":   func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"add": func(a, b float64) float64 { return a + b },
	"ms":  msText,
	"pct": func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) },
	"f2":  func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"ratio": func(d, floor time.Duration) string {
		if d <= 0 || floor <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f×", float64(d)/float64(floor))
	},
	"plotOf":   func(p plot, w, h float64) plotData { return plotData{P: p, W: w, H: h} },
	"markPath": markPath,
}).Parse(benchText))

// plotData is one plot and the page's plot size, for the plot template.
type plotData struct {
	P    plot
	W, H float64
}

// WriteBench writes bench.html to dir, atomically: the numbers as a table,
// locks per second against clients, and per client count the distribution
// of acquire latency of every lock.
func WriteBench(dir string, b Bench) error {
	return atomicfile.Write(filepath.Join(dir, BenchFile), func(w io.Writer) error { return writeBench(w, b) })
}

// Plot geometry, in SVG units.
const (
	plotW, plotH        = 460.0, 260.0
	plotLeft, plotRight = 56.0, 16.0
	plotTop, plotBottom = 14.0, 34.0
	maxCurvePoints      = 300 // points per latency curve: enough for the eye
	curveLow, curveHigh = 10 * time.Microsecond, 60 * time.Second
)

// palette colours the locks, in the order they first appear: hues far
// apart (blue, orange, green, red, purple, black, gold, pink), each at 3:1
// or more against the white plot, so that no two of the first six locks
// are told apart by shade alone.
var palette = []string{"#0b63c9", "#d86400", "#1a8a3a", "#c8102e", "#7a3fbf", "#1d2329", "#9a7000", "#c2367f"}

type point struct{ X, Y float64 }

type series struct {
	Lock, Colour, Points string // Points: an SVG polyline's points
	Dash                 string // the line's dash pattern ("" solid)
	Shape                int    // the marks' shape: an index into markShapes
	Marks                []plotMark
}

// dashes and markShapes tell the locks apart where their lines lie on one
// another (etcd-mutex and etcd-election often do): each lock has its own
// dash and mark shape beside its colour.
var dashes = []string{"", "7 4", "2 3", "9 3 2 3", "4 4", "1 3", "12 4", "5 2 1 2"}

var markShapes = []func(x, y float64) string{
	func(x, y float64) string {
		return fmt.Sprintf("M%.1f %.1fm-3.5 0a3.5 3.5 0 1 0 7 0a3.5 3.5 0 1 0 -7 0z", x, y)
	},
	func(x, y float64) string { return fmt.Sprintf("M%.1f %.1fh7v7h-7z", x-3.5, y-3.5) },
	func(x, y float64) string { return fmt.Sprintf("M%.1f %.1fl4.5 8h-9z", x, y-4.5) },
	func(x, y float64) string { return fmt.Sprintf("M%.1f %.1fl4.5 4.5 -4.5 4.5 -4.5 -4.5z", x, y-4.5) },
	func(x, y float64) string { return fmt.Sprintf("M%.1f %.1fl4.5 -8h-9z", x, y+4.5) },
	func(x, y float64) string { return fmt.Sprintf("M%.1f %.1fh9v4h-9z", x-4.5, y-2) },
}

// markPath is the SVG path of a mark of the given shape at x, y.
func markPath(x, y float64, shape int) string { return markShapes[shape%len(markShapes)](x, y) }

type plotMark struct {
	X, Y  float64
	Title string
}

type axisTick struct {
	X, Y  float64
	Label string
}

type plot struct {
	Title          string
	Series         []series
	XTicks, YTicks []axisTick
	XLabel, YLabel string
	Guides         []axisTick // horizontal guides (percentiles)
}

func writeBench(w io.Writer, b Bench) error {
	var locks []string
	var counts []int
	for _, r := range b.Rows {
		if !slices.Contains(locks, r.Lock) {
			locks = append(locks, r.Lock)
		}
		if !slices.Contains(counts, r.Clients) {
			counts = append(counts, r.Clients)
		}
	}
	slices.Sort(counts)
	colour := func(lock string) series {
		i := slices.Index(locks, lock)
		return series{Lock: lock, Colour: palette[i%len(palette)], Dash: dashes[i%len(dashes)], Shape: i}
	}
	var legend []series
	for _, l := range locks {
		legend = append(legend, colour(l))
	}
	var failed []BenchRow
	for _, r := range b.Rows {
		if r.Error != "" {
			failed = append(failed, r)
		}
	}
	var latency []plot
	for _, n := range counts {
		latency = append(latency, latencyPlot(b.Rows, n, colour))
	}
	data := struct {
		Bench
		Legend     []series
		Throughput plot
		Latency    []plot
		Failed     []BenchRow
		W, H       float64
	}{Bench: b, Legend: legend, Throughput: throughputPlot(b.Rows, locks, counts, colour), Latency: latency,
		Failed: failed, W: plotW, H: plotH}
	return benchPage.Execute(w, data)
}

// throughputPlot is locks per second against clients, a line per lock; the
// client counts are spaced evenly (they usually grow tenfold).
func throughputPlot(rows []BenchRow, locks []string, counts []int, colour func(string) series) plot {
	p := plot{Title: "Locks per second against contending clients", XLabel: "clients", YLabel: "locks/s"}
	top := 0.0
	for _, r := range rows {
		if r.Error == "" {
			top = max(top, r.LocksPerSec)
		}
	}
	top = niceCeil(top)
	x := func(n int) float64 {
		i := slices.Index(counts, n)
		if len(counts) == 1 {
			return plotLeft + (plotW-plotLeft-plotRight)/2
		}
		return plotLeft + 20 + float64(i)*(plotW-plotLeft-plotRight-40)/float64(len(counts)-1)
	}
	y := func(v float64) float64 { return plotH - plotBottom - v/top*(plotH-plotTop-plotBottom) }
	for _, n := range counts {
		p.XTicks = append(p.XTicks, axisTick{X: x(n), Y: plotH - plotBottom + 14, Label: fmt.Sprint(n)})
	}
	for i := range 5 {
		v := top * float64(i) / 4
		p.YTicks = append(p.YTicks, axisTick{X: plotLeft - 6, Y: y(v), Label: fmt.Sprintf("%.0f", v)})
	}
	for _, l := range locks {
		s := colour(l)
		var pts []string
		for _, r := range rows {
			if r.Lock != l || r.Error != "" {
				continue
			}
			px, py := x(r.Clients), y(r.LocksPerSec)
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px, py))
			s.Marks = append(s.Marks, plotMark{X: px, Y: py, Title: fmt.Sprintf("%s, %d clients: %.1f locks/s", l, r.Clients, r.LocksPerSec)})
		}
		if len(pts) == 0 {
			continue // every measurement of it failed
		}
		s.Points = strings.Join(pts, " ")
		p.Series = append(p.Series, s)
	}
	return p
}

// latencyPlot is, for one client count, the share of acquires that took at
// most x (x on a log scale), a curve per lock, with guides at p50, p70, p90
// and p99 and a mark where each lock crosses them.
func latencyPlot(rows []BenchRow, clients int, colour func(string) series) plot {
	p := plot{Title: fmt.Sprintf("Acquire latency, %d client(s)", clients), XLabel: "acquire latency", YLabel: "share ≤ x"}
	lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
	var mine []BenchRow
	for _, r := range rows {
		if r.Clients != clients || r.Error != "" || len(r.Acquire.Samples) == 0 {
			continue
		}
		mine = append(mine, r)
		lo = min(lo, slices.Min(r.Acquire.Samples))
		hi = max(hi, slices.Max(r.Acquire.Samples))
	}
	if len(mine) == 0 {
		return p
	}
	// Decades that hold every sample.
	lo, hi = max(lo, curveLow), min(max(hi, lo+1), curveHigh)
	d0 := math.Floor(math.Log10(float64(lo)))
	d1 := math.Ceil(math.Log10(float64(hi)))
	if d1 <= d0 {
		d1 = d0 + 1
	}
	x := func(d time.Duration) float64 {
		v := math.Log10(float64(max(d, 1)))
		v = min(max(v, d0), d1)
		return plotLeft + (v-d0)/(d1-d0)*(plotW-plotLeft-plotRight)
	}
	y := func(share float64) float64 { return plotH - plotBottom - share*(plotH-plotTop-plotBottom) }
	for d := d0; d <= d1; d++ {
		p.XTicks = append(p.XTicks, axisTick{X: x(time.Duration(math.Pow(10, d))), Y: plotH - plotBottom + 14,
			Label: durationText(time.Duration(math.Pow(10, d)))})
	}
	for _, v := range []float64{0, 0.5, 1} {
		p.YTicks = append(p.YTicks, axisTick{X: plotLeft - 6, Y: y(v), Label: fmt.Sprintf("%.0f%%", 100*v)})
	}
	for _, q := range []float64{0.5, 0.7, 0.9, 0.99} {
		p.Guides = append(p.Guides, axisTick{X: plotW - plotRight, Y: y(q), Label: fmt.Sprintf("p%.0f", 100*q)})
	}
	for _, r := range mine {
		sorted := slices.Clone(r.Acquire.Samples)
		slices.Sort(sorted)
		s := colour(r.Lock)
		var pts []string
		step := max(1, len(sorted)/maxCurvePoints)
		for i := 0; i < len(sorted); i += step {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(sorted[i]), y(float64(i+1)/float64(len(sorted)))))
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(sorted[len(sorted)-1]), y(1)))
		s.Points = strings.Join(pts, " ")
		for _, q := range []struct {
			share float64
			d     time.Duration
		}{{0.5, r.Acquire.P50}, {0.7, r.Acquire.P70}, {0.9, r.Acquire.P90}, {0.99, r.Acquire.P99}} {
			s.Marks = append(s.Marks, plotMark{X: x(q.d), Y: y(q.share),
				Title: fmt.Sprintf("%s, %d clients: p%.0f %s", r.Lock, clients, 100*q.share, msText(q.d))})
		}
		p.Series = append(p.Series, s)
	}
	return p
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= v {
			return m * e
		}
	}
	return 10 * e
}

// durationText labels a decade: 10µs, 1ms, 10s.
func durationText(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%gs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%gms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%gµs", float64(d)/float64(time.Microsecond))
}

// msText is a duration in milliseconds, two decimals below 10 ms.
func msText(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	if v >= 10 {
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}
