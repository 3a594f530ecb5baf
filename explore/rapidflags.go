package explore

import (
	"flag"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// rapid takes its configuration from its package's flags, not from a
// check's arguments. It reads them at known moments: rapid.checks and
// rapid.seed once, as rapid.Check begins and before the property first
// runs; rapid.shrinktime once a case has failed; rapid.v, rapid.log and
// rapid.nofailfile throughout. Explorations running at once (a test's, a
// gate's beside it) share the flags this way:
//   - the flags read throughout are set once, to the same values, while
//     any exploration runs, and put back after the last one ends;
//   - rapid.shrinktime is set past any exploration's deadline: each
//     exploration keeps its own (exploration.prop stops running new
//     scripts once its ShrinkTime is spent);
//   - rapid.checks and rapid.seed are set for one check at a time, and
//     held from before rapid.Check until its property first runs (or the
//     check ends), by when rapid has read them.
//
// So an exploration draws the same cases whatever runs beside it
// (TestExplorationsAtOnceDrawTheirOwnCases).
type rapidFlags struct {
	mu      sync.Mutex // guards users and restore
	users   int
	restore func()
	// check is held from setting checks and seed until rapid read them.
	check sync.Mutex
}

var sharedRapid rapidFlags

// rapidShrinkTime is rapid's own shrinking deadline, which no
// exploration's ShrinkTime reaches.
const rapidShrinkTime = 24 * time.Hour

// enter sets the flags every exploration shares, if none runs yet.
func (r *rapidFlags) enter() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.users == 0 {
		// rapid asks testing.Short(): outside a test binary that needs the
		// testing flags registered and the command line parsed (with
		// nothing: a program parses its own arguments with its own flag
		// sets).
		testing.Init()
		if !flag.Parsed() {
			_ = flag.CommandLine.Parse(nil)
		}
		restore, err := setRapid(map[string]string{
			"rapid.shrinktime": rapidShrinkTime.String(),
			"rapid.nofailfile": "true",
			"rapid.v":          "false",
			"rapid.log":        "false",
		})
		if err != nil {
			return err
		}
		r.restore = restore
	}
	r.users++
	return nil
}

// leave puts the flags back once the last exploration has ended.
func (r *rapidFlags) leave() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.users--; r.users == 0 {
		r.restore()
		r.restore = nil
	}
}

// beginCheck sets rapid.checks and rapid.seed for the check about to
// start. The returned func, which the check's property calls as it first
// runs and the caller once the check has returned (whichever comes
// first; later calls do nothing), puts them back and lets the next check
// set its own.
func (r *rapidFlags) beginCheck(checks int, seed uint64) (func(), error) {
	r.check.Lock()
	restore, err := setRapid(map[string]string{
		"rapid.checks": strconv.Itoa(checks),
		"rapid.seed":   strconv.FormatUint(seed, 10),
	})
	if err != nil {
		r.check.Unlock()
		return nil, err
	}
	return sync.OnceFunc(func() {
		restore()
		r.check.Unlock()
	}), nil
}

// setRapid sets rapid's flags and returns what puts them back.
func setRapid(values map[string]string) (func(), error) {
	old := map[string]string{}
	for name, v := range values {
		f := flag.Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("explore: rapid has no flag %s", name)
		}
		old[name] = f.Value.String()
		if err := f.Value.Set(v); err != nil {
			return nil, err
		}
	}
	return func() {
		for name, v := range old {
			flag.Lookup(name).Value.Set(v)
		}
	}, nil
}
