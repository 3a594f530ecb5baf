package scenarios

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/models"
)

//go:embed scripts/*.txt
var scripts embed.FS

// Expect is what a configuration is documented to get.
type Expect string

// Expectations. Any is reported but never gates: the outcome depends on
// timing the schedule does not fix (the random scenario on an unfenced
// resource).
const (
	ExpectPass Expect = "PASS"
	ExpectFail Expect = "FAIL"
	ExpectAny  Expect = "ANY"
)

// Scenario is one entry of the catalog.
type Scenario struct {
	Name string
	// Lesson is what happens and why it matters, in a paragraph.
	Lesson string
	// Members is the cluster size it needs; MemberFaults says whether it
	// acts on members (so it cannot run on an external cluster).
	Members      int
	MemberFaults bool
	TTL          int
	// script is the file in scripts/ for a deterministic scenario.
	script string
	// Plan derives the scenario's schedule from the seed (the script's
	// commands, or a fault schedule); Run executes it on an Env.
	run func(ctx context.Context, e *Env, p Plan) error
	// Expect gives the expected verdict per resource (the lock does not
	// change it for the built-in locks).
	Expect func(resource string) Expect
	// Extra adds scenario-specific checks of one resource's history.
	Extra func(events []history.Event) []models.Verdict
}

// unfencedFails is the expectation of the holder scenarios.
func unfencedFails(resource string) Expect {
	if resource == "unfenced" {
		return ExpectFail
	}
	return ExpectPass
}

func alwaysPass(string) Expect { return ExpectPass }

// unfencedAny is the expectation of the scenarios that can cut a holder off
// from the cluster without meaning to: if the holder's own member dies or is
// isolated, its lease can lapse while it is inside its critical section, and
// its late write to an unfenced store may lose an update — or not, by timing.
// Reported, never gated; fenced and guarded stores must pass.
func unfencedAny(resource string) Expect {
	if resource == "unfenced" {
		return ExpectAny
	}
	return ExpectPass
}

// holderCutOff ends the lessons of the scenarios that use unfencedAny.
const holderCutOff = " If the lock holder's own member is the one cut off, its lease can lapse in the middle of its critical " +
	"section and its late write can hit an unfenced store after the next holder's — so that case is reported, not gated."

// Catalog lists every scenario in a fixed order.
var Catalog = []Scenario{
	{
		Name: "paused-holder",
		Lesson: "c1 holds the lock and reads the counter, then freezes before its write (a GC pause, SIGSTOP) for longer " +
			"than its lease. The server lets the lease lapse and grants the lock to c2, which reads and writes. c1 wakes up " +
			"and writes too, with the grant it still believes in. Unfenced, one increment is lost; a fenced store rejects " +
			"c1's older token, and an etcd write guarded by c1's lock key finds the key gone. A lease is not a lock; a " +
			"fencing token makes it one.",
		Members: 3, TTL: 1, script: "paused-holder.txt", Expect: unfencedFails,
	},
	{
		Name: "isolated-holder",
		Lesson: "c1 holds the lock when the network between it and the cluster fails. Its keep-alives stop arriving; " +
			"the lease lapses; c2 is granted the lock and writes. The partition heals and c1, which noticed nothing, " +
			"writes with its old grant. An unfenced store takes the stale write; fenced and guarded stores refuse it.",
		Members: 3, TTL: 1, script: "isolated-holder.txt", Expect: unfencedFails,
	},
	{
		Name: "expire-while-waiting",
		Lesson: "c2 waits in the queue behind c1 when its own session dies. Its place in the queue went with its lease, " +
			"so when c1 releases, c2 must be told its session expired — never that it acquired the lock (the etcd v3.4 " +
			"bug Jepsen found, fixed in v3.5).",
		Members: 3, TTL: 1, script: "expire-while-waiting.txt", Expect: alwaysPass,
		Extra: func(events []history.Event) []models.Verdict { return []models.Verdict{expiredWaiter(events)} },
	},
	{
		Name: "leader-failover",
		Lesson: "Three clients contend while the etcd leader is killed. A new leader is elected in about an election " +
			"timeout; clients of the dead member stall and lose their leases; the others go on. etcd's linearizable " +
			"writes keep every fenced or guarded resource safe." + holderCutOff,
		Members: 3, TTL: 1, MemberFaults: true, Expect: unfencedAny,
		run: func(ctx context.Context, e *Env, p Plan) error {
			return e.contend(ctx, 3, 12, faults.Fault{Kind: faults.KillLeader}, 4, 8)
		},
	},
	{
		Name: "minority-partition",
		Lesson: "The members split one against two while clients on all of them contend. The isolated member cannot " +
			"serve linearizable requests, so its client's lease lapses and the majority side carries on; after the heal " +
			"everyone rejoins. A quorum system partitioned this way stays safe." + holderCutOff,
		Members: 3, TTL: 1, MemberFaults: true, Expect: unfencedAny,
		run: func(ctx context.Context, e *Env, p Plan) error {
			return e.contend(ctx, 3, 12, faults.Fault{Kind: faults.IsolateMember, Member: p.Member}, 4, 8)
		},
	},
	{
		Name: "member-restart",
		Lesson: "A member is killed mid-run and restarted on its own data directory. It comes back with every key it " +
			"had and catches up; its clients reconnect." + holderCutOff,
		Members: 3, TTL: 1, MemberFaults: true, Expect: unfencedAny,
		run: func(ctx context.Context, e *Env, p Plan) error {
			return e.contend(ctx, 3, 12, faults.Fault{Kind: faults.KillMember, Member: p.Member}, 4, 8)
		},
	},
	{
		Name: "contention",
		Lesson: "Five clients contend for the lock with no fault at all: the baseline. Every increment must be kept and " +
			"every token must grow; the run also shows how fast each lock hands over.",
		Members: 3, TTL: 1, Expect: alwaysPass,
		run: func(ctx context.Context, e *Env, p Plan) error {
			return e.contend(ctx, 5, 10, faults.Fault{}, 0, 0)
		},
	},
	{
		Name: "random",
		Lesson: "A seeded mix of every fault — partitions, kills, leader moves, cut and delayed links, expired leases and " +
			"paused clients — while three clients contend. With pauses longer than a lease, an unfenced resource may " +
			"lose updates (how often depends on timing, so it is reported, not gated); fenced and guarded resources " +
			"must stay correct. The schedule is a pure function of the seed.",
		Members: 3, TTL: 1, MemberFaults: true,
		Expect: unfencedAny,
		run:    func(ctx context.Context, e *Env, p Plan) error { return e.random(ctx, p) },
	},
}

// Lookup finds a scenario by name.
func Lookup(name string) (Scenario, error) {
	for _, s := range Catalog {
		if s.Name == name {
			return s, nil
		}
	}
	return Scenario{}, fmt.Errorf("unknown scenario %q (scenarios: %s)", name, strings.Join(Names(), ", "))
}

// Names lists the scenarios in catalog order.
func Names() []string {
	names := make([]string, len(Catalog))
	for i, s := range Catalog {
		names[i] = s.Name
	}
	return names
}

// Plan is a scenario's schedule, derived from the seed alone.
type Plan struct {
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// Steps are a script's commands, for a deterministic scenario.
	Steps []string `json:"steps,omitempty"`
	// Member is the member a single-member fault picks.
	Member string `json:"member,omitempty"`
	// Faults is the fault schedule of the random scenario.
	Faults *faults.Schedule `json:"faults,omitempty"`
}

// randomClients and randomPoints shape the random scenario.
var (
	randomClients = []string{"c1", "c2", "c3"}
	randomPoints  = []string{lock.AfterAcquire, lock.BeforeWrite, lock.BeforeRelease}
)

// RandomDuration is how long the random scenario's fault schedule runs.
const RandomDuration = 5 * time.Second

// Plan derives the schedule for seed.
func (s Scenario) Plan(seed uint64) (Plan, error) {
	p := Plan{Scenario: s.Name, Seed: seed}
	members := make([]string, s.Members)
	for i := range members {
		members[i] = fmt.Sprintf("m%d", i+1)
	}
	switch {
	case s.script != "":
		steps, err := s.steps()
		if err != nil {
			return p, err
		}
		for _, st := range steps {
			p.Steps = append(p.Steps, st.Raw())
		}
	case s.Name == "random":
		sch, err := faults.Generate(faults.GenConfig{
			Seed: seed, Members: members, Clients: randomClients, Points: randomPoints,
			Duration: faults.Duration(RandomDuration),
			HoldMin:  faults.Duration(300 * time.Millisecond), HoldMax: faults.Duration(2500 * time.Millisecond),
			GapMin: faults.Duration(100 * time.Millisecond), GapMax: faults.Duration(500 * time.Millisecond),
		})
		if err != nil {
			return p, err
		}
		p.Faults = &sch
	case s.MemberFaults:
		p.Member = members[seed%uint64(len(members))]
	}
	return p, nil
}

func (s Scenario) steps() ([]Step, error) {
	text, err := scripts.ReadFile("scripts/" + s.script)
	if err != nil {
		return nil, err
	}
	return ParseScript(s.script, string(text))
}

// Script returns a deterministic scenario's steps, or nil for one driven
// by a workload.
func (s Scenario) Script() ([]Step, error) {
	if s.script == "" {
		return nil, nil
	}
	return s.steps()
}

// Raw is the step's command line as written.
func (st Step) Raw() string {
	parts := []string{st.Cmd}
	for _, a := range st.Args {
		parts = append(parts, a.String())
	}
	return strings.Join(parts, " ")
}

// Execute runs the plan on e. For a script, a step whose output differs from
// the script's expectation is reported in the error but does not stop the
// run: the verdict comes from the history.
func (s Scenario) Execute(ctx context.Context, e *Env, p Plan) error {
	if s.run != nil {
		return s.run(ctx, e, p)
	}
	steps, err := s.steps()
	if err != nil {
		return err
	}
	e.bg = ctx
	var diffs []string
	for _, st := range steps {
		if st.Cmd == "check" {
			continue // the runner checks every history itself
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		sctx, cancel := context.WithTimeout(ctx, stepTimeout) // no step may hang a run
		out := e.Do(sctx, st.Cmd, st.Args)
		cancel()
		if out != st.Expected && e.lockKind == "queue" {
			diffs = append(diffs, fmt.Sprintf("%s:%d: %s: got %q, script says %q", s.script, st.Line, st.Raw(), out, st.Expected))
		}
	}
	if len(diffs) > 0 {
		return errors.New(strings.Join(diffs, "\n"))
	}
	return nil
}

// expiredWaiter checks that no acquire that ended after a lease-lost event
// of its client... more simply: a client whose lease was lost while it was
// waiting never reports the grant of that wait.
func expiredWaiter(events []history.Event) models.Verdict {
	v := models.Verdict{Check: "expired-waiter"}
	lost := map[string]int64{}
	invoked := map[int]history.Event{}
	for _, ev := range events {
		switch {
		case ev.Type == history.LeaseLost:
			if _, ok := lost[ev.Client]; !ok {
				lost[ev.Client] = ev.AliveUntil
			}
		case ev.Type == history.Invoke && ev.Op == history.Acquire:
			invoked[ev.ID] = ev
		case ev.Type == history.Ok && ev.Op == history.Acquire:
			inv := invoked[ev.ID]
			v.Operations++
			if t, ok := lost[ev.Client]; ok && t >= inv.Time {
				v.Result = models.Fail
				v.Explanation = fmt.Sprintf("%s was granted the lock although its lease ended while it waited.", ev.Client)
				return v
			}
		}
	}
	v.Result = models.Pass
	v.Explanation = "No client whose lease ended while it waited was told it holds the lock."
	return v
}

// contend runs n clients (on members in turn), each doing up to sections
// critical sections. If f is set, it is applied once `after` sections in all
// have completed, and undone once `undoAfter` more have — or, if progress
// stalls, after an election timeout's worth of waiting for it, so that a
// fault that stops every client cannot stop the run.
func (e *Env) contend(ctx context.Context, n, sections int, f faults.Fault, after, undoAfter int) error {
	members := e.c.Members()
	var names []string
	for i := range n {
		name := fmt.Sprintf("c%d", i+1)
		if err := e.AddClient(ctx, name, members[i%len(members)]); err != nil {
			return err
		}
		names = append(names, name)
	}
	var done atomic.Int64
	progress := make(chan struct{}, 1)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Go(func() {
			for range sections {
				if wctx.Err() != nil {
					return
				}
				if e.cycle(wctx, name) {
					done.Add(1)
					select {
					case progress <- struct{}{}:
					default:
					}
				}
			}
		})
	}
	var ferr error
	if f.Kind != "" {
		ferr = e.duringContention(ctx, f, &done, progress, int64(after), int64(undoAfter))
	}
	wg.Wait()
	return ferr
}

// duringContention applies f after `after` sections and undoes it after
// `undoAfter` more (or after the stall timeout).
func (e *Env) duringContention(ctx context.Context, f faults.Fault, done *atomic.Int64, progress <-chan struct{}, after, undoAfter int64) error {
	waitFor := func(target int64) {
		stall := time.NewTimer(stallWait)
		defer stall.Stop()
		for done.Load() < target {
			select {
			case <-progress:
				stall.Reset(stallWait)
			case <-stall.C:
				return
			case <-ctx.Done():
				return
			}
		}
	}
	waitFor(after)
	in, err := e.Fault(ctx, f)
	if err != nil {
		return err
	}
	waitFor(done.Load() + undoAfter)
	return in.Undo(ctx)
}

// cycle is one client's acquire → critical section → release, with its pause
// points; it reports whether the critical section ran.
func (e *Env) cycle(ctx context.Context, client string) bool {
	w, err := e.worker(client)
	if err != nil {
		return false
	}
	if _, err := e.Acquire(ctx, client); err != nil {
		return false
	}
	if w.cl.PausePoint(ctx, lock.AfterAcquire) != nil {
		return false
	}
	_, csErr := e.CS(ctx, client)
	if w.cl.PausePoint(ctx, lock.BeforeRelease) != nil {
		return false
	}
	e.Release(ctx, client)
	return csErr == nil
}

// random runs the random scenario: three clients contend while the plan's
// fault schedule runs.
func (e *Env) random(ctx context.Context, p Plan) error {
	members := e.c.Members()
	for i, name := range randomClients {
		if err := e.AddClient(ctx, name, members[i%len(members)]); err != nil {
			return err
		}
	}
	// The schedule names clients as the run does; the cluster knows them
	// by their run-qualified names.
	sched := *p.Faults
	sched.Steps = slices.Clone(sched.Steps)
	for i, st := range sched.Steps {
		if st.Fault.Client != "" {
			sched.Steps[i].Fault.Client = e.clientName(st.Fault.Client)
		}
	}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, name := range randomClients {
		wg.Go(func() {
			for wctx.Err() == nil {
				e.cycle(wctx, name)
			}
		})
	}
	err := e.nemesis.Run(ctx, sched)
	stop()
	// Resume anything still paused so workers can see they must stop.
	uerr := e.nemesis.UndoAll(context.WithoutCancel(ctx))
	wg.Wait()
	if err != nil {
		// A fault that could not be applied (a pause whose client never
		// reached a pause point in time) is on the timeline; not a failure.
		err = nil
	}
	return errors.Join(err, uerr)
}

// stepTimeout bounds one script step; the slowest (waiting for a lease to
// lapse) takes about 1.5 s.
const stepTimeout = 30 * time.Second

// stallWait is how long a contention scenario waits for progress before it
// moves on to its next fault step anyway.
const stallWait = 2 * time.Second
