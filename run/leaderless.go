package run

import (
	"context"
	"maps"
	"slices"
	"time"
)

// LeaderView is what one member of a store with a leader, up and
// answering, says of its cluster's leadership.
type LeaderView struct {
	// Member names the member.
	Member string
	// Follows says the member follows a leader (or is one).
	Follows bool
	// Term is the member's term: it grows with every election the member
	// takes part in or hears of, however brief.
	Term uint64
}

// WatchLeaders notes, until ctx ends, every span in which a member was
// without its leader, asking views (every member's word on its leader)
// every interval. A span begins at the last look that found the member
// following the leader of the term it knew, and ends, calling lost with
// the member and the span's start, at the first look that finds it
// following one again — at once when it follows a leader of a newer term
// (an election between two looks, however brief), or when ctx ends.
// Without a fault that reaches the members, such a span is the machine's
// doing (see history.ObservedLeaderless).
func WatchLeaders(ctx context.Context, interval time.Duration, views func(context.Context) []LeaderView,
	lost func(member string, from time.Time)) {
	term := map[string]uint64{}
	since := map[string]time.Time{}
	everyTick(ctx, interval, func(last, now time.Time) {
		for _, v := range views(ctx) {
			known, seen := term[v.Member]
			term[v.Member] = max(known, v.Term)
			from, open := since[v.Member]
			switch {
			case !seen && !v.Follows:
				since[v.Member] = now
			case !seen:
			case open && v.Follows:
				lost(v.Member, from)
				delete(since, v.Member)
			case !open && !v.Follows:
				since[v.Member] = last
			case !open && v.Term > known:
				lost(v.Member, last)
			}
		}
	})
	for _, m := range slices.Sorted(maps.Keys(since)) {
		lost(m, since[m])
	}
}
