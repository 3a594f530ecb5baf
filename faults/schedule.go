package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/locklab/locklab/cluster"
)

// RandomKinds are the kinds Generate draws from when none are given: every
// kind except heal and restart-member, which are the undo of others, and
// crash-client, which restarts the client's lock and is drawn only when
// asked for (a schedule that names it in Kinds).
var RandomKinds = []Kind{Partition, IsolateMember, IsolateLeader, CutClient, DelayClient,
	KillMember, KillLeader, MoveLeader, PauseClient, ExpireLease}

// Generator defaults.
const (
	DefaultHoldMin = Duration(500 * time.Millisecond)
	DefaultHoldMax = Duration(3 * time.Second)
	DefaultGapMin  = Duration(200 * time.Millisecond)
	DefaultGapMax  = Duration(time.Second)
	DefaultDelay   = Duration(200 * time.Millisecond) // most a delay-client draws
	grain          = 10 * time.Millisecond            // every drawn time is a multiple
)

// GenConfig is everything a random schedule depends on.
type GenConfig struct {
	Seed    uint64
	Kinds   []Kind   // empty means RandomKinds
	Members []string // member names the faults may name
	Clients []string // client names the faults may name
	Points  []string // pause points; empty means cluster.AnyPoint
	// Steps is the number of faults; if zero, faults are drawn until the
	// schedule covers Duration.
	Steps    int
	Duration Duration
	// HoldMin…HoldMax is how long each fault stays; GapMin…GapMax the quiet
	// time before each. Zero means the defaults.
	HoldMin, HoldMax Duration
	GapMin, GapMax   Duration
}

// Step is one fault of a schedule: applied At after the schedule starts, and
// undone Hold after it took effect.
type Step struct {
	At    Duration `json:"at"`
	Fault Fault    `json:"fault"`
	Hold  Duration `json:"hold"`
}

// Schedule is a list of faults applied one at a time.
type Schedule struct {
	Seed  uint64 `json:"seed"`
	Kinds []Kind `json:"kinds"`
	Steps []Step `json:"steps"`
}

// Generate derives a schedule from cfg alone: the same cfg gives the same
// schedule, byte for byte in JSON, on every machine and Go version (the draws
// use the PCG generator's raw output, whose algorithm is fixed).
func Generate(cfg GenConfig) (Schedule, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return Schedule{}, err
	}
	r := draw{rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)}
	s := Schedule{Seed: cfg.Seed, Kinds: cfg.Kinds, Steps: []Step{}}
	var at time.Duration
	for i := 0; ; i++ {
		if cfg.Steps > 0 && i >= cfg.Steps {
			break
		}
		at += r.duration(cfg.GapMin, cfg.GapMax)
		hold := r.duration(cfg.HoldMin, cfg.HoldMax)
		if cfg.Steps == 0 && at+hold > cfg.Duration.Std() {
			break
		}
		s.Steps = append(s.Steps, Step{At: Duration(at), Fault: r.fault(cfg), Hold: Duration(hold)})
		at += hold
	}
	return s, nil
}

func (cfg GenConfig) withDefaults() GenConfig {
	if len(cfg.Kinds) == 0 {
		cfg.Kinds = RandomKinds
	}
	if len(cfg.Points) == 0 {
		cfg.Points = []string{cluster.AnyPoint}
	}
	def := func(d *Duration, v Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&cfg.HoldMin, DefaultHoldMin)
	def(&cfg.HoldMax, DefaultHoldMax)
	def(&cfg.GapMin, DefaultGapMin)
	def(&cfg.GapMax, DefaultGapMax)
	return cfg
}

func (cfg GenConfig) validate() error {
	var errs []error
	for _, k := range cfg.Kinds {
		if _, err := ParseKind(string(k)); err != nil {
			errs = append(errs, err)
		}
		if k.NeedsOwnedCluster() && len(cfg.Members) == 0 {
			errs = append(errs, fmt.Errorf("fault %s needs members", k))
		}
		if !k.NeedsOwnedCluster() && len(cfg.Clients) == 0 {
			errs = append(errs, fmt.Errorf("fault %s needs clients", k))
		}
	}
	if k := Partition; slices.Contains(cfg.Kinds, k) && len(cfg.Members) < 2 {
		errs = append(errs, fmt.Errorf("fault %s needs two members", k))
	}
	if cfg.Steps < 0 || (cfg.Steps == 0 && cfg.Duration <= 0) {
		errs = append(errs, errors.New("schedule: give a positive number of steps or a duration"))
	}
	if cfg.HoldMin > cfg.HoldMax || cfg.GapMin > cfg.GapMax {
		errs = append(errs, errors.New("schedule: a minimum exceeds its maximum"))
	}
	return errors.Join(errs...)
}

// draw makes bounded draws from raw 64-bit output (modulo: the tiny bias does
// not matter here, stability does).
type draw struct{ src *rand.PCG }

func (r draw) intn(n int) int { return int(r.src.Uint64() % uint64(n)) }

func (r draw) pick(s []string) string { return s[r.intn(len(s))] }

// duration draws a multiple of grain in [lo, hi].
func (r draw) duration(lo, hi Duration) time.Duration {
	steps := int((hi.Std() - lo.Std()) / grain)
	return lo.Std() + time.Duration(r.intn(steps+1))*grain
}

func (r draw) fault(cfg GenConfig) Fault {
	f := Fault{Kind: cfg.Kinds[r.intn(len(cfg.Kinds))]}
	switch f.Kind {
	case Partition:
		f.Groups = r.split(cfg.Members)
	case IsolateMember, KillMember, RestartMember:
		f.Member = r.pick(cfg.Members)
	case MoveLeader:
		f.Member = r.pick(cfg.Members)
	case CutClient, CrashClient:
		f.Client = r.pick(cfg.Clients)
	case DelayClient:
		f.Client = r.pick(cfg.Clients)
		f.Delay = Duration(r.duration(Duration(grain), DefaultDelay))
	case PauseClient:
		f.Client = r.pick(cfg.Clients)
		f.Point = r.pick(cfg.Points)
	case ExpireLease:
		f.Client = r.pick(cfg.Clients)
		f.Mode = []string{ModeRevoke, ModeLapse}[r.intn(2)]
	}
	return f
}

// split shuffles members into two non-empty groups, each in member order.
func (r draw) split(members []string) [][]string {
	shuffled := slices.Clone(members)
	for i := len(shuffled) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
	}
	k := 1 + r.intn(len(shuffled)-1)
	a, b := shuffled[:k], shuffled[k:]
	slices.Sort(a)
	slices.Sort(b)
	if a[0] > b[0] {
		a, b = b, a
	}
	return [][]string{a, b}
}

// MarshalIndent writes s as the indented JSON a schedule file holds.
func (s Schedule) MarshalIndent() ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseSchedule reads a schedule file's JSON and validates every fault.
func ParseSchedule(b []byte) (Schedule, error) {
	var s Schedule
	if err := json.Unmarshal(b, &s); err != nil {
		return Schedule{}, fmt.Errorf("schedule: %w", err)
	}
	for i, st := range s.Steps {
		if err := st.Fault.Validate(); err != nil {
			return Schedule{}, fmt.Errorf("schedule: step %d: %w", i+1, err)
		}
		if st.At < 0 || st.Hold < 0 {
			return Schedule{}, fmt.Errorf("schedule: step %d: negative time", i+1)
		}
	}
	return s, nil
}

// Run applies the schedule's faults one at a time, each At after Run began
// (or at once if the previous one ran late) and undone Hold after it took
// effect. A fault that fails to apply is recorded and skipped. When ctx ends,
// Run undoes what is active and returns. The error joins every failure.
func (n *Nemesis) Run(ctx context.Context, s Schedule) error {
	begin := time.Now()
	var errs []error
	for _, st := range s.Steps {
		if !sleepUntil(ctx, begin.Add(st.At.Std())) {
			break
		}
		in, err := n.Apply(ctx, st.Fault)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sleepUntil(ctx, time.Now().Add(st.Hold.Std()))
		errs = append(errs, in.Undo(context.WithoutCancel(ctx)))
	}
	return errors.Join(errs...)
}

// sleepUntil waits for a scheduled instant; false if ctx ended first. This is
// the schedule's own timing, not a stand-in for a condition.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
