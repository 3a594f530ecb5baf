package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/models"
)

// Attempts is how many times, at most, one configuration runs — the same
// seed, so the same schedule — when its environment rather than its lock
// took a holder's lease away and its judgement did not match (see
// models.CheckEnvironment): a busy machine's lapse is not the lock's, and a
// quieter moment may judge the lock. The last attempt gives the machine
// room: its leases are twice as long (Result.LeaseScale, as --ttl gives
// them), the lesson's timeouts and bounds scaled alike. A lock that is at
// fault stays so on every attempt; the last attempt's result stands, and
// names the others.
const Attempts = 3

// attempts runs one configuration (once is one call of run, with the lease
// scale it is to run at, ttl for all but the last), again while its
// environment lapsed a lease and the judgement did not match (at most
// Attempts times in all).
func attempts(ctx context.Context, ttl int, run func(ttl int) []Result) []Result {
	var earlier []string
	for attempt := 1; ; attempt++ {
		scale := ttl
		if attempt == Attempts {
			scale = 2 * ttl
		}
		rs := run(scale)
		why := environmentLapsed(rs)
		if why == "" || attempt == Attempts || ctx.Err() != nil {
			for i := range rs {
				rs[i].Retried = append(slices.Clone(earlier), rs[i].Retried...)
				if scale != ttl {
					rs[i].LeaseScale = scale
				}
			}
			return rs
		}
		earlier = append(earlier, fmt.Sprintf("attempt %d: %s", attempt, why))
	}
}

// environmentLapsed says why a run's results call for another attempt: a
// result that does not match its expectation, in a run whose environment
// took a holder's lease away. "" if none does.
func environmentLapsed(rs []Result) string {
	for _, r := range rs {
		if why := r.Environmental(); why != "" {
			return fmt.Sprintf("%s %s — %s", r.Resource, r.Verdict, why)
		}
	}
	return ""
}

// Environmental says, in its first sentence, why the environment rather
// than the lock may have decided a result that does not match its
// expectation — a busy machine let a lease its lock renewed lapse, or cut
// the run short while the lab's own process stood still (see
// models.CheckEnvironment) — and "" when it did not: the result matches,
// was skipped, or nothing of the environment's is recorded. The runner
// runs such a configuration again (Attempts); one that is still
// environmental after the last attempt was not judged: a quieter machine,
// or a longer TTL, may judge it.
func (r Result) Environmental() string {
	if r.Skipped != "" {
		return ""
	}
	return models.Unjudged(r.Matches, r.Checks)
}

// NotJudged reports whether r was not judged: the environment kept it
// from matching on its last attempt (Environmental), and no check caught
// the lock failing (a FAIL is a finding, however busy the machine).
func (r Result) NotJudged() bool {
	return r.Skipped == "" && models.NotJudged(r.Verdict, r.Matches, r.Checks)
}

// open opens a run on st, starting the store again — at most Attempts
// times in all — when it would not start (a server that did not come up
// on a busy machine): nothing of the lock's has run yet, so nothing is
// judged by trying again. It returns what the earlier attempts met, as
// Result.Retried says it.
func open(ctx context.Context, st Store, cfg EngineConfig) (Engine, func() error, []string, error) {
	var earlier []string
	runID := cfg.RunID
	for attempt := 1; ; attempt++ {
		cfg.RunID = fmt.Sprintf("%s-%d", runID, time.Now().UnixNano())
		env, closeEnv, err := st.Open(ctx, cfg)
		if err == nil && cfg.ClientShim != "" {
			cc, ok := env.(ClientClocks)
			if !ok {
				closeEnv() //nolint:errcheck // the run ends here, on the error below
				return nil, nil, earlier, errors.New("the lab cannot move a client's clock on this store")
			}
			cc.MoveClientClocks(cfg.ClientShim)
		}
		if err == nil || attempt == Attempts || ctx.Err() != nil {
			return env, closeEnv, earlier, err
		}
		earlier = append(earlier, fmt.Sprintf("attempt %d: the store did not start: %v", attempt, err))
	}
}
