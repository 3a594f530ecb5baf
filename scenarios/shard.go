package scenarios

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/internal/shards"
)

// Shard is one part of a campaign split across machines: shard Index (from
// 1) of Count. The zero Shard is the whole campaign.
//
// A campaign's jobs — scenario × lock × seed, each run on every resource —
// are listed in one fixed order from the flags alone, and shard K runs the
// jobs K, K+N, K+2N, …: the shards together run each job once, each shard
// about as many as the next, with every scenario spread over all of them.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// JobIndexEnv is the variable a Kubernetes Indexed Job sets in each pod:
// its completion index, from 0.
const JobIndexEnv = "JOB_COMPLETION_INDEX"

// ParseShard reads "K/N" (1 ≤ K ≤ N), or "auto/N", which takes K from
// Kubernetes' JOB_COMPLETION_INDEX (0-based: index 0 is shard 1) as getenv
// reads it.
func ParseShard(s string, getenv func(string) string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	count, err := strconv.Atoi(n)
	if !ok || err != nil || count < 1 {
		return Shard{}, fmt.Errorf("--shard %q: want K/N (shard K of N, from 1) or auto/N", s)
	}
	var index int
	if k == "auto" {
		v := getenv(JobIndexEnv)
		i, err := strconv.Atoi(v)
		if err != nil {
			return Shard{}, fmt.Errorf("--shard auto/%d: %s is %q, not a completion index (set by a Kubernetes Indexed Job)",
				count, JobIndexEnv, v)
		}
		index = i + 1
	} else if index, err = strconv.Atoi(k); err != nil {
		return Shard{}, fmt.Errorf("--shard %q: want K/N (shard K of N, from 1) or auto/N", s)
	}
	if index < 1 || index > count {
		return Shard{}, fmt.Errorf("--shard %q: shard %d of %d does not exist (shards are 1 to %d)", s, index, count, count)
	}
	return Shard{Index: index, Count: count}, nil
}

// String is "K/N", or "" for the whole campaign.
func (s Shard) String() string {
	if s.Count <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// ran says what part of its campaign a run with this shard ran.
func (s Shard) ran() string {
	if s.Count <= 1 {
		return "ran the whole campaign (no --shard)"
	}
	return "ran shard " + s.String()
}

// keeps reports whether the shard runs the i-th job of the campaign.
func (s Shard) keeps(i int) bool { return s.Count <= 1 || i%s.Count == s.Index-1 }

// Campaign is what a run was asked to run, as its results file records it:
// runs of the same campaign can be merged.
type Campaign struct {
	Scenarios  []string `json:"scenarios"`
	Locks      []string `json:"locks"`
	Resources  []string `json:"resources"`
	Seed       uint64   `json:"seed"`
	Runs       int      `json:"runs"`
	Members    int      `json:"members"`
	LeaseScale int      `json:"lease_scale"`
	ExpectPass bool     `json:"expect_pass,omitempty"`
	External   bool     `json:"external,omitempty"`
	// Jobs is how many jobs the whole campaign has, all shards together.
	Jobs  int   `json:"jobs"`
	Shard Shard `json:"shard,omitzero"`
	// LeftOut says, a line each, which resources and lessons were not run
	// for which locks and why: another store's (see Scenario.NotFor); the
	// lessons' lines are LessonsLeftOut's, said (LessonLeftOut.Line).
	LeftOut        []string        `json:"left_out,omitempty"`
	LessonsLeftOut []LessonLeftOut `json:"lessons_left_out,omitempty"`
}

// A LessonLeftOut is a lesson a campaign did not run for some of its
// locks: their store cannot do what it needs (Why, Scenario.NotFor's).
type LessonLeftOut struct {
	Lesson string   `json:"lesson"`
	Why    string   `json:"why"`
	Locks  []string `json:"locks"`
}

// Line says l in a line, as Campaign.LeftOut has it.
func (l LessonLeftOut) Line() string {
	return fmt.Sprintf("%s, not run for %s", l.Why, strings.Join(l.Locks, ", "))
}

// same reports whether c and o are shards of one campaign.
func (c Campaign) same(o Campaign) bool {
	c.Shard, o.Shard = Shard{}, Shard{}
	return slices.Equal(c.Scenarios, o.Scenarios) && slices.Equal(c.Locks, o.Locks) &&
		slices.Equal(c.Resources, o.Resources) && c.Seed == o.Seed && c.Runs == o.Runs && c.Members == o.Members &&
		c.LeaseScale == o.LeaseScale && c.ExpectPass == o.ExpectPass && c.External == o.External && c.Jobs == o.Jobs
}

// Flags are the run flags that ask for c (without --shard).
func (c Campaign) Flags() string {
	f := fmt.Sprintf("--scenario %s --lock %s --resource %s --seed %d --runs %d --members %d --ttl %d",
		strings.Join(c.Scenarios, ","), strings.Join(c.Locks, ","), strings.Join(c.Resources, ","),
		c.Seed, c.Runs, c.Members, c.LeaseScale)
	if c.ExpectPass {
		f += " --expect pass"
	}
	return f
}

// Errors of Merge.
var (
	// ErrNotOneCampaign: the summaries were not run with the same version
	// and flags, or one was not sharded.
	ErrNotOneCampaign = errors.New("not shards of one campaign")
	// ErrShardsMissing: some shard of the campaign is not among them.
	ErrShardsMissing = errors.New("shards missing")
)

// Merge puts the summaries of a campaign's shards together into the
// summary the unsharded run would have written: every result once, in the
// unsharded run's order, complete only if every shard is. It refuses
// summaries of different versions or campaigns, a shard given twice, a
// configuration run twice, and missing shards (it names them).
func Merge(sums []Summary, names []string) (Summary, error) {
	if len(sums) == 0 {
		return Summary{}, fmt.Errorf("%w: no results to merge", ErrNotOneCampaign)
	}
	first := sums[0]
	if first.Campaign == nil {
		return Summary{}, fmt.Errorf("%w: %s records no campaign (written by a locklab before --shard)", ErrNotOneCampaign, names[0])
	}
	c := *first.Campaign
	out := Summary{Version: first.Version, Complete: true}
	var index []int
	for i, s := range sums {
		switch {
		case s.Version != first.Version:
			return Summary{}, fmt.Errorf("%w: %s is of locklab %s, %s of %s", ErrNotOneCampaign, names[i], s.Version, names[0], first.Version)
		case s.Campaign == nil || !s.Campaign.same(c):
			return Summary{}, fmt.Errorf("%w: %s was not run with the flags of %s (%s)", ErrNotOneCampaign, names[i], names[0], c.Flags())
		case s.Campaign.Shard.Count != c.Shard.Count:
			return Summary{}, fmt.Errorf("%w: %s %s, %s %s", ErrNotOneCampaign, names[i], s.Campaign.Shard.ran(), names[0], c.Shard.ran())
		}
		index = append(index, s.Campaign.Shard.Index)
		out.Complete = out.Complete && s.Complete
		out.Seconds = max(out.Seconds, s.Seconds) // the shards ran at once
		out.Results = append(out.Results, s.Results...)
	}
	twice, missing := shards.Cover(index, c.Shard.Count, names)
	if twice != "" {
		return Summary{}, fmt.Errorf("%w: %s", ErrNotOneCampaign, twice)
	}
	if len(missing) > 0 {
		return Summary{}, fmt.Errorf("%w: %s (run them with --shard K/%d and the flags %s)", ErrShardsMissing,
			strings.Join(missing, ", "), c.Shard.Count, c.Flags())
	}
	type config struct {
		scenario, lock, resource string
		seed                     uint64
	}
	ran := map[config]bool{}
	for _, r := range out.Results {
		k := config{r.Scenario, r.Lock, r.Resource, r.Seed}
		if ran[k] {
			return Summary{}, fmt.Errorf("%w: %s × %s × %s seed %d was run twice", ErrNotOneCampaign, r.Scenario, r.Lock, r.Resource, r.Seed)
		}
		ran[k] = true
	}
	slices.SortStableFunc(out.Results, func(a, b Result) int {
		return cmp.Or(cmp.Compare(slices.Index(c.Scenarios, a.Scenario), slices.Index(c.Scenarios, b.Scenario)),
			cmp.Compare(slices.Index(c.Locks, a.Lock), slices.Index(c.Locks, b.Lock)),
			cmp.Compare(a.Seed, b.Seed),
			cmp.Compare(slices.Index(c.Resources, a.Resource), slices.Index(c.Resources, b.Resource)))
	})
	c.Shard = Shard{}
	out.Campaign = &c
	return out, nil
}

// HistoryPath is where a result's history lies in the directory dir of
// the run that recorded it: scenario/lock/seed/resource.history.jsonl.
func HistoryPath(dir string, r Result) string {
	return filepath.Join(dir, r.Scenario, SafeName(r.Lock), fmt.Sprint(r.Seed), r.Resource+".history.jsonl")
}
