package models

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/history"
)

// fenced is the state of Kleppmann's fenced storage: a value and the largest
// token it has accepted.
type fenced struct{ value, token int64 }

// registerModel: a write with a token at least the largest seen is accepted
// and sets the value; one with a smaller token is rejected; a read returns the
// value.
var registerModel = model[fenced]{
	name: "register",
	step: func(s fenced, op history.Operation) []fenced {
		switch op.Op {
		case history.Read:
			if op.Type == history.Ok && (op.Value == nil || *op.Value != s.value) {
				return nil
			}
			return []fenced{s}
		case history.Write:
			ok := op.Token >= s.token
			next := s
			if ok && op.Value != nil {
				next = fenced{*op.Value, op.Token}
			}
			switch {
			case op.Type == history.Info && ok:
				return []fenced{s, next}
			case op.Type == history.Info:
				return []fenced{s}
			case op.Accepted != nil && !*op.Accepted:
				if ok {
					return nil // rejected a write it should have taken
				}
				return []fenced{s}
			case !ok:
				return nil // accepted a stale write
			}
			return []fenced{next}
		}
		return []fenced{s}
	},
	hash:  func(s fenced) uint64 { return uint64(s.value)*31 + uint64(s.token) },
	state: func(s fenced) string { return fmt.Sprintf("value = %d, largest token = %d", s.value, s.token) },
}

// CheckRegister checks reads and token-carrying writes on a fenced store.
func CheckRegister(ops []history.Operation, faults []history.Event, timeout time.Duration) Verdict {
	ops = select_(ops, func(op history.Operation) bool {
		return (op.Op == history.Read || op.Op == history.Write) && op.Type != history.Fail
	})
	v := Verdict{Check: "register", Operations: len(ops)}
	if len(ops) == 0 {
		v.Result, v.Explanation = NotApplicable, "The history has no read or write of a fenced store."
		return v
	}
	res, viz := linearize(registerModel, ops, faults, timeout)
	porcupineVerdict(&v, res, viz, timeout,
		"The fenced store behaved as it must: it took every write whose token was at least the largest it had seen, "+
			"refused every older one, and reads saw the last accepted value.",
		"The fenced store's reads and writes fit no order in which it accepts exactly the writes with a token at least "+
			"the largest seen: a stale write got through, a current one was refused, or a read saw a value never kept. "+
			"The evidence shows the last operation that fits and the one that cannot follow it.",
		nil)
	return v
}
