package explore

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/shards"
)

// Campaign is what an exploration was asked to draw, as its results file
// records it: shards of one campaign can be merged.
type Campaign struct {
	Lock      string   `json:"lock"`
	Resources []string `json:"resources"`
	Faults    []string `json:"faults"`
	Cases     int      `json:"cases"`
	Seed      uint64   `json:"seed"`
	Steps     int      `json:"steps"`
	TTL       int      `json:"ttl"`
	Members   int      `json:"members"`
	// Shard (from 1) of Shards; zero for the whole exploration.
	Shard  int `json:"shard,omitempty"`
	Shards int `json:"shards,omitempty"`
}

// Flags are the explore flags that ask for c (without --shard).
func (c Campaign) Flags() string {
	return fmt.Sprintf("--lock %s --resource %s --faults %s --cases %d --seed %d --steps %d --ttl %d --members %d",
		c.Lock, strings.Join(c.Resources, ","), strings.Join(c.Faults, ","), c.Cases, c.Seed, c.Steps, c.TTL, c.Members)
}

func (c Campaign) same(o Campaign) bool {
	c.Shard, o.Shard = 0, 0
	return c.Lock == o.Lock && slices.Equal(c.Resources, o.Resources) && slices.Equal(c.Faults, o.Faults) &&
		c.Cases == o.Cases && c.Seed == o.Seed && c.Steps == o.Steps && c.TTL == o.TTL && c.Members == o.Members &&
		c.Shards == o.Shards
}

// Failure is a failing case an exploration found, shrunk.
type Failure struct {
	// Case is its number in the whole exploration (from 1).
	Case    int      `json:"case"`
	Message string   `json:"message"`
	Actions []string `json:"actions"`
	// Script is the shrunk scenario file's name, beside the results file.
	Script string `json:"script"`
}

// Summary is what an exploration (or one shard of it) did, as its results
// file records it.
type Summary struct {
	Version  string   `json:"locklab_version"`
	Campaign Campaign `json:"campaign"`
	Complete bool     `json:"complete"`
	// Cases drawn, Faulted of them with a fault, Runs scripts run
	// (shrinking included).
	Cases    int       `json:"cases"`
	Faulted  int       `json:"faulted"`
	Runs     int       `json:"runs"`
	Failures []Failure `json:"failures,omitempty"`
}

// ExitCode is the command's exit status for s: 1 if a case failed, 3 if
// the exploration was cut short or no case drew a fault (nothing was put
// to the test), 0 otherwise.
func (s Summary) ExitCode() int {
	switch {
	case len(s.Failures) > 0:
		return 1
	case !s.Complete || s.Faulted == 0:
		return 3
	}
	return 0
}

// Errors of Merge.
var (
	// ErrNotOneExploration: the summaries were not drawn with the same
	// version and flags, or a shard was given twice.
	ErrNotOneExploration = errors.New("not shards of one exploration")
	// ErrShardsMissing: some shard of the exploration is not among them.
	ErrShardsMissing = errors.New("shards missing")
)

// Merge puts the summaries of an exploration's shards together: the cases
// and runs added up, every shard's failure kept (in case order). It
// refuses summaries of other versions or flags, a shard given twice and
// missing shards (it names them).
func Merge(sums []Summary, names []string) (Summary, error) {
	if len(sums) == 0 {
		return Summary{}, fmt.Errorf("%w: nothing to merge", ErrNotOneExploration)
	}
	first := sums[0]
	out := Summary{Version: first.Version, Campaign: first.Campaign, Complete: true}
	out.Campaign.Shard = 0
	var index []int
	for i, s := range sums {
		switch {
		case s.Version != first.Version:
			return Summary{}, fmt.Errorf("%w: %s is of locklab %s, %s of %s", ErrNotOneExploration, names[i], s.Version, names[0], first.Version)
		case !s.Campaign.same(first.Campaign):
			return Summary{}, fmt.Errorf("%w: %s was not drawn with the flags of %s (%s, %d shards)", ErrNotOneExploration,
				names[i], names[0], first.Campaign.Flags(), first.Campaign.Shards)
		}
		index = append(index, s.Campaign.Shard)
		out.Complete = out.Complete && s.Complete
		out.Cases += s.Cases
		out.Faulted += s.Faulted
		out.Runs += s.Runs
		out.Failures = append(out.Failures, s.Failures...)
	}
	twice, missing := shards.Cover(index, first.Campaign.Shards, names)
	if twice != "" {
		return Summary{}, fmt.Errorf("%w: %s", ErrNotOneExploration, twice)
	}
	if len(missing) > 0 {
		return Summary{}, fmt.Errorf("%w: %s (draw them with --shard K/%d and the flags %s)", ErrShardsMissing,
			strings.Join(missing, ", "), first.Campaign.Shards, first.Campaign.Flags())
	}
	slices.SortFunc(out.Failures, func(a, b Failure) int { return a.Case - b.Case })
	return out, nil
}
