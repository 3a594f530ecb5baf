package scenarios

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/locklab/locklab/faults"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/run"
	"github.com/locklab/locklab/script"
)

// Plan is a scenario's schedule, derived from the seed alone.
type Plan struct {
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// Steps are a script's commands, for a deterministic scenario.
	Steps []string `json:"steps,omitempty"`
	// Member is the member a single-member fault picks.
	Member string `json:"member,omitempty"`
	// Work is how long each client of the slow-holder scenario works in its
	// critical section, by client.
	Work map[string]faults.Duration `json:"work,omitempty"`
	// LeaseScale is the lease scale the run was made with
	// (Config.LeaseScale; 0: leases as the scenario writes them): a replay
	// makes them alike. A schedule written before it had this name says
	// "ttl" (see UnmarshalJSON).
	LeaseScale int `json:"lease_scale,omitempty"`
	// Store is the store a lock run as a process was on (Config.Store;
	// "": etcd): a replay runs it there again.
	Store string `json:"store,omitempty"`
}

// randomActions is how many actions the random scenario draws.
const randomActions = 12

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
			p.Steps = append(p.Steps, st.Cmd.String())
		}
	case s.draw != nil:
		s.draw(s, seed, &p)
	case s.MemberFaults:
		p.Member = members[seed%uint64(len(members))]
	}
	return p, nil
}

func (s Scenario) steps() ([]script.Step, error) {
	text := s.text
	if text == "" {
		b, err := scripts.ReadFile("scripts/" + s.script)
		if err != nil {
			return nil, err
		}
		text = string(b)
	}
	steps, err := script.Parse(s.script, text)
	if err != nil || s.scale <= 1 {
		return steps, err
	}
	// A script's times scale like any scenario's (Scaled): setup ttl=1
	// under --ttl 2 runs 2 s leases, and a blip or a section written
	// against 1 s leases lasts twice as long — and says so ("link cut
	// for 800ms"), as the step's expected output then does too.
	for i := range steps {
		c := &steps[i].Cmd
		c.TTL *= s.scale
		c.Work *= time.Duration(s.scale)
		if c.For > 0 {
			was := c.For
			c.For *= time.Duration(s.scale)
			steps[i].Expected = strings.ReplaceAll(steps[i].Expected, fmt.Sprintf(" %v", was), fmt.Sprintf(" %v", c.For))
		}
	}
	return steps, nil
}

// OpTimeout bounds one operation of the scenario's clients.
func (s Scenario) OpTimeout() time.Duration { return cmp.Or(s.opTimeout, run.DefaultOpTimeout) }

// Script returns a deterministic scenario's steps, or nil for one driven
// by a workload.
func (s Scenario) Script() ([]script.Step, error) {
	if s.script == "" {
		return nil, nil
	}
	return s.steps()
}

// Execute runs the plan on e: a workload's, or a script's steps, each
// compared with the script's output, whatever the lock (see script.Run): a
// step that did not do what the script says makes the run an ERROR.
func (s Scenario) Execute(ctx context.Context, e script.Target, p Plan) error {
	if s.exec != nil {
		return s.exec(ctx, e, p)
	}
	steps, err := s.steps()
	if err != nil {
		return err
	}
	return script.Run(ctx, e, s.script, steps)
}

// contendUnder is the contention workload of n clients under a fault of
// kind (of the plan's member, for a fault of one), shaped by ph, on any
// store whose run can apply it (run.Faulter).
func contendUnder(n int, kind faults.Kind, ph run.Phases) func(context.Context, script.Target, Plan) error {
	return func(ctx context.Context, t script.Target, p Plan) error {
		r, ok := t.(run.Faulter)
		if !ok {
			return fmt.Errorf("this store's run cannot apply %s", kind)
		}
		f := faults.Fault{Kind: kind}
		if kind == faults.IsolateMember || kind == faults.KillMember {
			f.Member = p.Member
		}
		return run.ContendOnUnder(ctx, r, n, f, ph)
	}
}

// slowClients are the slow-holder scenario's clients.
var slowClients = []string{"c1", "c2", "c3"}

// slowWork draws each slow-holder client's work from seed: uniform in
// [TTL/4, 5·TTL/4], to the millisecond, except one client's, also drawn,
// which works for 5·TTL/2 — longer than a lease can live unrenewed.
func slowWork(seed uint64, ttl time.Duration) map[string]faults.Duration {
	rng := rand.New(rand.NewPCG(seed, 0x510e))
	work := map[string]faults.Duration{}
	for _, c := range slowClients {
		d := ttl/4 + time.Duration(rng.Int64N(int64(ttl)))
		work[c] = faults.Duration(d.Round(time.Millisecond))
	}
	work[slowClients[rng.IntN(len(slowClients))]] = faults.Duration(5 * ttl / 2)
	return work
}

// work is the plan's slow-holder work, by client.
func (p Plan) work() map[string]time.Duration {
	out := map[string]time.Duration{}
	for c, d := range p.Work {
		out[c] = time.Duration(d)
	}
	return out
}

// Check says what is wrong with a schedule read back from a file (nil:
// nothing): a name outside the grammar of names, a step that is no command
// of the scenario language. A replay refuses such a schedule before it
// runs anything.
func (p Plan) Check() error {
	if err := history.CheckName("scenario", p.Scenario); err != nil {
		return err
	}
	if p.Member != "" {
		if err := history.CheckName("member", p.Member); err != nil {
			return err
		}
	}
	for c := range p.Work {
		if err := history.CheckName("client", c); err != nil {
			return fmt.Errorf("work: %w", err)
		}
	}
	if p.Store != "" {
		if err := history.CheckName("store", p.Store); err != nil {
			return err
		}
	}
	if p.LeaseScale < 0 || p.LeaseScale > script.MaxTTL {
		return fmt.Errorf("lease_scale %d: want 0 to %d", p.LeaseScale, script.MaxTTL)
	}
	for i, st := range p.Steps {
		if _, err := script.ParseLine(st); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	return nil
}
