package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/script"
)

// A StoreKind is what a lock runs on, as the catalog's lessons see it: a
// store's name (Backend.Name), what it is in words, and what its runs can
// do (script.Capabilities). A lesson is for a lock when the lock's store
// can do all the lesson needs (Scenario.Needs); a new store says what it
// can, and the lessons that apply to it follow.
type StoreKind struct {
	// Name is the store's name, as its Backend's.
	Name string
	// Label says what its locks run on, in a reason's words ("one Redis
	// primary").
	Label string
	// Can is what its runs can do, each with how.
	Can script.Capabilities
	// Shows names the lock whose output a lesson's script shows when the
	// lesson is first for this store ("zk-herd"; locklab explain).
	Shows string
}

// Needs are the capabilities s needs of a store: those it names, those
// its script's commands need, and, unless it names a shape of store
// (script.Masters) or runs on any (Redlock's masters too), one store whose
// servers replicate the lock.
func (s Scenario) Needs() []script.Capability {
	out := slices.Clone(s.needs)
	if steps, err := s.Script(); err == nil {
		for _, c := range script.Needs(steps) {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	if !s.anyShape && !slices.Contains(out, script.Masters) && !slices.Contains(out, script.OneStore) {
		out = append([]script.Capability{script.OneStore}, out...)
	}
	return out
}

// movesClientClock reports whether s's script moves a client's own clock
// (jump-clock cN, drift-clock cN).
func (s Scenario) movesClientClock() bool {
	steps, err := s.Script()
	return err == nil && slices.ContainsFunc(steps, func(st script.Step) bool {
		return (st.Cmd.Name == "jump-clock" || st.Cmd.Name == "drift-clock") && st.Cmd.Client != ""
	})
}

// NotFor says why s is no lesson for a lock on a store of kind k, "" when
// it is one: the capabilities it needs that k lacks. A gate or a run
// leaves such a pair out — a lesson of another store says nothing about
// the lock — and says so; it is never a failure.
func (s Scenario) NotFor(k StoreKind) string {
	lacks := k.Can.Lacks(s.Needs())
	if len(lacks) == 0 {
		return ""
	}
	words := make([]string, len(lacks))
	for i, c := range lacks {
		words[i] = c.Words()
	}
	return fmt.Sprintf("%s needs a store that can %s, which a lock on %s cannot", s.Name, strings.Join(words, "; "), k.Label)
}

// For reports whether s is a lesson for a lock on a store of kind k.
func (s Scenario) For(k StoreKind) bool { return s.NotFor(k) == "" }
