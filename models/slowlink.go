package models

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/history"
)

// late is a keep-alive that a slow link delivered after the lease it
// renewed had ended: sent at sent, it arrived (sent plus the link's delay)
// at arrived, past ended — a TTL after the keep-alive before it (or the
// grant) arrived.
type late struct {
	sent, arrived, ended, delay int64
}

// lateSlack is how much later than its lease's end, as a fraction of the
// TTL, a keep-alive must arrive to be called late: the server takes its
// keep-alives a little after they arrive, the more so on a loaded machine.
const lateSlack = 20

// lateKeepAlive finds, for client's lost lease l, the first keep-alive that
// a delay of client's own link (a slow link, on the timeline from the
// acquire's call, from, to the loss) delivered after the lease had ended by
// the reckoning of the keep-alives before it: each keep-alive sent at s
// while the link was delayed by d reaches the server at s+d, and the lease
// lives a TTL from the latest one that reached it alive. The lock sent it
// too late for the link it had — one that renews a TTL after the last
// answer, say, loses a round trip at every renewal. nil if none did, or if
// the history lacks the TTL or the keep-alives.
func lateKeepAlive(excused []span, client string, from int64, l history.Loss) *late {
	delays := slowLinks(excused, client, from, l)
	if len(delays) == 0 || l.TTL <= 0 || len(l.Renewals) < 2 {
		return nil
	}
	arrival := func(sent int64) (int64, int64) {
		for _, s := range delays {
			if sent >= s.from && sent <= s.to {
				return sent + s.delay, s.delay
			}
		}
		return sent, 0
	}
	first, _ := arrival(l.Renewals[0])
	ends := first + l.TTL
	for _, sent := range l.Renewals[1:] {
		if sent > l.Gone {
			break
		}
		at, d := arrival(sent)
		if at > ends+l.TTL/lateSlack {
			return &late{sent: sent, arrived: at, ended: ends, delay: d}
		}
		ends = max(ends, at+l.TTL)
	}
	return nil
}

// renewedThrough reports whether l's client renewed it in time (see
// history.Loss.Renewed), its last keep-alive's arrival counted late by the
// delay of a slow link it crossed.
func renewedThrough(excused []span, client string, from int64, l history.Loss) bool {
	if !l.Renewed() {
		return false
	}
	for _, s := range slowLinks(excused, client, from, l) {
		if l.RenewedAt >= s.from && l.RenewedAt <= s.to {
			return l.RenewedAt+s.delay+l.TTL >= l.AliveUntil
		}
	}
	return true
}

// readAliveSlack is how long past its end a lease may still be read alive:
// etcd's TimeToLive truncates the time left toward zero, so a lease ended
// less than a second ago reads TTL 0, as a live one does.
const readAliveSlack = int64(time.Second)

// outlived is how much longer than it could have the server kept client's
// lost lease l alive, by the keep-alives the lab saw: a lease lives a TTL
// from the last keep-alive (or the grant) that reached the server, the
// delay of a slow link it crossed included, and may read alive for
// readAliveSlack more; half a TTL is left for the lab's polling and a busy
// server's lag. Zero when it lived no longer than that, or when the
// history lacks the TTL or the keep-alives. A lease that outlived every
// keep-alive by more was kept alive by the server's own clock standing
// still — a process starved of CPU (the embedded members run in the lab's
// process, beside the clients' keep-alives), a leader change refreshing
// every lease — which the lab's stall watch missed: what the lease came
// to is the environment's, not the lock's.
func outlived(excused []span, client string, from int64, l history.Loss) int64 {
	last := lastReached(excused, client, from, l)
	if l.TTL <= 0 || last <= 0 {
		return 0
	}
	return max(l.AliveUntil-(last+l.TTL+readAliveSlack+l.TTL/2), 0)
}

// lastReached is when the last keep-alive (or the grant) of client's lost
// lease l that the lab saw before its last sighting alive reached the
// server, a slow link's delay counted; zero if none is known.
func lastReached(excused []span, client string, from int64, l history.Loss) int64 {
	last := l.RenewedAt
	for _, r := range l.Renewals {
		if r <= l.AliveUntil {
			last = max(last, r)
		}
	}
	if last <= 0 {
		return 0
	}
	for _, s := range slowLinks(excused, client, from, l) {
		if last >= s.from && last <= s.to {
			return last + s.delay
		}
	}
	return last
}

// slowLinks lists the delays of client's own link on the timeline from the
// acquire's call, from, to l's loss.
func slowLinks(excused []span, client string, from int64, l history.Loss) []span {
	var out []span
	for _, s := range excused {
		if s.delay > 0 && s.link == client && client != "" && s.from <= l.Gone && s.to >= from {
			out = append(out, s)
		}
	}
	return out
}

// lateExplanation says why a slow link does not excuse the holder's lost
// lease: its keep-alive, sent too late for the link's delay, arrived after
// the lease had ended.
func lateExplanation(h heldLoss) string {
	c, l, k := h.grant.Client, h.loss, h.late
	return fmt.Sprintf("The server ended %s's lease %v into its hold, before %s began to release the lock. %s's link "+
		"delayed every message by %v each way, a slow link but a working one: %s's keep-alive sent at %s arrived "+
		"about %s, after the lease had ended at about %s — a TTL (%v) after the grant or keep-alive before it reached the server. The lock "+
		"sent its keep-alive too late for the link it had (a lock that renews a TTL after the last answer, not after "+
		"the last request, loses a round trip at every renewal), and the lock was free for the next client while %s "+
		"still held it.", c, time.Duration(l.Gone-h.grant.Return), c, c, time.Duration(k.delay), c, at(k.sent),
		at(k.arrived), at(k.ended), time.Duration(l.TTL), c)
}
