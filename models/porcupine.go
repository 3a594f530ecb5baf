package models

import (
	"fmt"
	"html"
	"io"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/atomicfile"
)

// model is a typed nondeterministic sequential specification: step returns
// every state the operation may lead to from s (none: illegal here). It is
// the only place that touches Porcupine's interface{} API.
type model[S comparable] struct {
	name      string
	init      S
	step      func(s S, op history.Operation) []S
	hash      func(s S) uint64
	state     func(s S) string
	partition func(op history.Operation) string // nil: one partition
}

func (m model[S]) porcupine() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{m.init} },
		Step: func(state, input, _ any) []any {
			next := m.step(state.(S), input.(history.Operation))
			out := make([]any, len(next))
			for i, s := range next {
				out[i] = s
			}
			return out
		},
		Hash: func(state any) uint64 { return m.hash(state.(S)) },
		// Porcupine's page sets an operation's description as text, but a
		// state's as HTML (its tooltip's innerHTML): escaped here, so that
		// a name in a history is never markup there.
		DescribeOperation: func(input, _ any) string { return describe(input.(history.Operation)) },
		DescribeState:     func(state any) string { return html.EscapeString(m.state(state.(S))) },
	}
	if m.partition != nil {
		nm.Partition = func(ops []porcupine.Operation) [][]porcupine.Operation {
			groups := map[string][]porcupine.Operation{}
			var keys []string
			for _, op := range ops {
				k := m.partition(op.Input.(history.Operation))
				if _, ok := groups[k]; !ok {
					keys = append(keys, k)
				}
				groups[k] = append(groups[k], op)
			}
			slices.Sort(keys)
			out := make([][]porcupine.Operation, len(keys))
			for i, k := range keys {
				out[i] = groups[k]
			}
			return out
		}
	}
	return nm.ToModel()
}

// linearize checks ops against m within timeout (zero: no limit) and returns
// Porcupine's result with what is needed to draw it.
func linearize[S comparable](m model[S], ops []history.Operation, faults []history.Event, timeout time.Duration) (porcupine.CheckResult, *visualization) {
	clients := clientIDs(ops)
	pops := make([]porcupine.Operation, len(ops))
	for i, op := range ops {
		pops[i] = porcupine.Operation{ClientId: clients[op.Client], Input: op, Call: op.Call, Return: op.Return}
	}
	pm := m.porcupine()
	res, info := porcupine.CheckOperationsVerbose(pm, pops, timeout)
	info.AddAnnotations(annotations(faults, ops))
	return res, &visualization{model: pm, info: info}
}

// visualization is what Porcupine needs to draw a checked history.
type visualization struct {
	model porcupine.Model
	info  porcupine.LinearizationInfo
}

// stuck explains an Illegal result: the last operation of the longest order
// that fits the model, and the earliest-called operation left out of it,
// which no legal order can place next.
func (v *visualization) stuck() []history.Operation {
	var longest []porcupine.Operation
	var all []porcupine.Operation
	for _, part := range v.info.PartialLinearizationsOperations() {
		for _, lin := range part {
			if len(lin) > len(longest) {
				longest, all = lin, nil
			}
		}
	}
	in := map[int]bool{}
	for _, op := range longest {
		in[op.Input.(history.Operation).ID] = true
	}
	for _, part := range v.info.PartialLinearizationsOperations() {
		for _, lin := range part {
			all = append(all, lin...)
		}
	}
	var out []history.Operation
	if len(longest) > 0 {
		out = append(out, longest[len(longest)-1].Input.(history.Operation))
	}
	var next *history.Operation
	for _, op := range all {
		h := op.Input.(history.Operation)
		if !in[h.ID] && (next == nil || h.Call < next.Call) {
			next = &h
		}
	}
	if next != nil {
		out = append(out, *next)
	}
	return out
}

// WriteVisualization writes Porcupine's interactive HTML for the check to
// path (atomically). Only Porcupine checks have one.
func (v Verdict) WriteVisualization(path string) error {
	if v.viz == nil {
		return fmt.Errorf("check %s has no Porcupine visualization", v.Check)
	}
	return atomicfile.Write(path, v.visualize)
}

func (v Verdict) visualize(w io.Writer) error {
	return porcupine.Visualize(v.viz.model, v.viz.info, w)
}

// HasVisualization reports whether WriteVisualization can draw this verdict.
func (v Verdict) HasVisualization() bool { return v.viz != nil }

// clientIDs numbers clients from zero in name order.
func clientIDs(ops []history.Operation) map[string]int {
	var names []string
	for _, op := range ops {
		if !slices.Contains(names, op.Client) {
			names = append(names, op.Client)
		}
	}
	slices.Sort(names)
	ids := map[string]int{}
	for i, n := range names {
		ids[n] = i
	}
	return ids
}

// annotations draws fault windows on a "faults" row of the visualization.
func annotations(events []history.Event, ops []history.Operation) []porcupine.Annotation {
	var end int64
	for _, op := range ops {
		if op.Return != history.Infinity {
			end = max(end, op.Return)
		}
		end = max(end, op.Call)
	}
	var out []porcupine.Annotation
	for _, w := range history.FaultWindows(events) {
		desc, stop := w.Name(), w.End
		if w.Target != "" {
			desc += " (" + w.Target + ")"
		}
		if w.Open { // still active when the history ends
			stop = end
		}
		out = append(out, porcupine.Annotation{Tag: "faults", Start: w.Start, End: stop,
			Description: desc, BackgroundColor: "#f6d6d6"})
	}
	for _, e := range events {
		if e.Type == history.LeaseLost {
			out = append(out, porcupine.Annotation{Tag: "leases", Start: e.AliveUntil, End: e.Time,
				Description: e.Client + " lease lost", BackgroundColor: "#fde9b8"})
		}
	}
	slices.SortFunc(out, func(a, b porcupine.Annotation) int { return int(a.Start - b.Start) })
	return out
}

// describe renders an operation as the visualization and evidence show it:
// "c2 acquire → ok token=41".
func describe(op history.Operation) string {
	s := fmt.Sprintf("%s %s", op.Client, op.Op)
	if op.Synthetic {
		s += " (synthetic: client died holding)"
	}
	s += " → " + string(op.Type)
	switch op.Op {
	case history.Acquire:
		if op.Token != 0 {
			s += fmt.Sprintf(" token=%d", op.Token)
		}
		if op.Lease != 0 {
			s += fmt.Sprintf(" lease=%x", op.Lease)
		}
	case history.CS:
		s += fmt.Sprintf(" read=%s token=%d", value(op.Value), op.Token)
		if op.Accepted != nil {
			if *op.Accepted {
				s += " write accepted"
			} else {
				s += " write rejected"
				if op.Reason != "" {
					s += " (" + op.Reason + ")"
				}
			}
		}
	}
	if op.Error != "" {
		s += " (" + op.Error + ")"
	}
	return s
}

// describeSpan adds the operation's time span to describe.
func describeSpan(op history.Operation) string {
	ret := "∞"
	if op.Return != history.Infinity {
		ret = time.Duration(op.Return).String()
	}
	return fmt.Sprintf("%s [%v, %s]", describe(op), time.Duration(op.Call), ret)
}

func value(v *int64) string {
	if v == nil {
		return "?"
	}
	return fmt.Sprint(*v)
}

// porcupineVerdict fills v from a Porcupine result: the explanation for a
// pass, the one for a failure (with evidence found by evidenceFor, or, if it
// finds none, the operations where the longest legal order got stuck), and
// UNKNOWN — never PASS — when the checker ran out of time.
func porcupineVerdict(v *Verdict, res porcupine.CheckResult, viz *visualization, timeout time.Duration,
	pass, fail string, evidenceFor func() (string, []history.Operation)) {
	v.viz = viz
	switch res {
	case porcupine.Ok:
		v.Result, v.Explanation = Pass, pass
	case porcupine.Illegal:
		v.Result, v.Explanation = Fail, fail
		var extra string
		var ops []history.Operation
		if evidenceFor != nil {
			extra, ops = evidenceFor()
		}
		if len(ops) == 0 {
			ops = viz.stuck()
		}
		if extra != "" {
			v.Explanation += " " + extra
		}
		v.Evidence = evidence(ops...)
	default:
		v.Result = Unknown
		v.Explanation = fmt.Sprintf("The %s checker ran out of time (%v) on %d operations: not decided.", v.Check, timeout, v.Operations)
	}
}
