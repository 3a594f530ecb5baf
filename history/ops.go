package history

import (
	"math"
	"slices"
)

// Infinity is the Return of an operation whose outcome is unknown: it may
// take effect at any time after its call, or never.
const Infinity = math.MaxInt64

// Operation is an invocation paired with its completion.
type Operation struct {
	ID     int
	Client string
	Op     Op
	Lock   string
	// Type is Ok, Fail or Info. An operation never completed is Info.
	Type         Type
	Call, Return int64 // Return is Infinity for Info

	Token    int64
	Value    *int64
	Accepted *bool
	Reason   string
	Error    string
	// Synthetic marks a release the history did not contain: the client died
	// holding the lock (see Pair).
	Synthetic bool
}

// Pair turns events into operations in invocation order. Info operations and
// those never completed get Return = Infinity.
//
// A client that dies holding the lock — its last operation after an acquire
// is Info, or it never released — gets a synthetic Info release invoked at its
// last event, as Jepsen does: its lease will end some time, and without the
// release every later grant would look like a second holder. A client that
// goes on acting after a pause is not dead, and gets none.
func Pair(events []Event) []Operation {
	var ops []Operation
	index := map[int]int{} // id → position in ops
	last := map[string]int64{}
	for _, e := range events {
		switch {
		case e.Type == Invoke:
			index[e.ID] = len(ops)
			ops = append(ops, Operation{ID: e.ID, Client: e.Client, Op: e.Op, Lock: e.Lock, Type: Info,
				Call: e.Time, Return: Infinity, Token: e.Token, Value: e.Value})
			last[e.Client] = e.Time
		case e.IsCompletion():
			i, ok := index[e.ID]
			if !ok {
				continue
			}
			op := &ops[i]
			op.Type, op.Error = e.Type, e.Error
			if e.Type != Info {
				op.Return = e.Time
				last[e.Client] = e.Time
			}
			if e.Token != 0 {
				op.Token = e.Token
			}
			if e.Value != nil {
				op.Value = e.Value
			}
			op.Accepted, op.Reason = e.Accepted, e.Reason
		}
	}
	return append(ops, syntheticReleases(ops, last)...)
}

// syntheticReleases finds clients that ended holding a lock.
func syntheticReleases(ops []Operation, last map[string]int64) []Operation {
	type holding struct {
		lock string
		held bool
	}
	state := map[string]holding{}
	var clients []string
	for _, op := range ops {
		if _, seen := state[op.Client]; !seen {
			clients = append(clients, op.Client)
		}
		switch {
		case op.Op == Acquire && op.Type != Fail:
			state[op.Client] = holding{op.Lock, true} // Info: it may hold
		case op.Op == Release && op.Type == Ok:
			state[op.Client] = holding{}
		default:
			if _, seen := state[op.Client]; !seen {
				state[op.Client] = holding{}
			}
		}
	}
	var out []Operation
	nextID := 0
	for _, op := range ops {
		nextID = max(nextID, op.ID)
	}
	slices.Sort(clients)
	for _, c := range clients {
		if h := state[c]; h.held {
			nextID++
			out = append(out, Operation{ID: nextID, Client: c, Op: Release, Lock: h.lock, Type: Info,
				Call: last[c], Return: Infinity, Synthetic: true})
		}
	}
	return out
}
