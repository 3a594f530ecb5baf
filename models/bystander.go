package models

import (
	"slices"

	"github.com/locklab/locklab/history"
)

// A fault that can have reached a client excuses its lease's lapse while
// it is open (see excuses and reaches), for the lock's own checks: a lease
// the fault may have starved is no evidence against the lock. For the
// environment's verdict the question is the other one: was it the fault,
// or the machine? A lease
// whose client kept renewing it, lapsed while only faults that cannot
// reach that client were open — a member it never talked to cut off or
// killed, another client's link cut — lapsed through the machine, as it
// would with no fault open at all (see CheckEnvironment).

// aside says what explains the end of client's lease l once the faults
// that cannot have reached client are set aside (see reaches):
// unexcused if nothing else does.
func aside(excused []span, members map[string]map[string]bool, client string, from int64, l history.Loss) excuse {
	return excuseOf(reaching(excused, client, members), client, from, l)
}

// reaching keeps, of the excuses, the stalls and the faults that can have
// reached client (see reaches).
func reaching(excused []span, client string, members map[string]map[string]bool) []span {
	return slices.DeleteFunc(slices.Clone(excused), func(s span) bool {
		return s.window != nil && !reaches(*s.window, client, members[client])
	})
}

// environmental is the excuse that makes h's lapse the environment's:
// its own, or, when a fault excused it, what excuses it once the faults
// that cannot have reached its client are set aside. unexcused if neither
// does (a fault that may have starved the lease, or nothing at all).
func (h heldLoss) environmental() excuse {
	e := h.excuse
	if e == byFault {
		e = h.aside
	}
	if e == byRenewal || e == byStall || e == byOutlived || e == byUnanswered {
		return e
	}
	return unexcused
}

// reaches reports whether the fault of w can have starved the lease of
// client, whose connections went to members (empty: not recorded): a
// fault of one client's link or process reaches that client only; a
// fault of one member, the clients connected to it only; a fault of the
// leader, a partition, and a fault the history does not say enough
// about, every client. Leases are kept by the leader: every member
// forwards keep-alives to it, so while there is none (or a new one takes
// over) nobody's keep-alive is answered, and etcd's client gives a
// lease up once a TTL passes without an answer — although the new
// leader extends the lease on the server.
func reaches(w history.FaultWindow, client string, members map[string]bool) bool {
	switch w.Spec.Kind {
	case history.FaultHeal:
		return false
	case history.FaultCutClient, history.FaultDelayClient, history.FaultPauseClient, history.FaultCrashClient,
		history.FaultLoseAnswer, history.FaultExpireLease, history.FaultHoldAnswers, history.FaultLoseRequest:
		return w.Spec.Client == "" || w.Spec.Client == client
	case history.FaultIsolateLeader, history.FaultKillLeader, history.FaultMoveLeader:
		return true
	case history.FaultIsolateMember, history.FaultKillMember, history.FaultRestartMember:
		m := w.Member()
		return m == "" || len(members) == 0 || members[m]
	}
	return true
}

// connections lists, for each client, every member the history saw it
// connected to (history.ObservedConnected).
func connections(events []history.Event) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, e := range events {
		if e.Type != history.Observed || e.What != history.ObservedConnected || e.Client == "" || e.Member == "" {
			continue
		}
		if out[e.Client] == nil {
			out[e.Client] = map[string]bool{}
		}
		out[e.Client][e.Member] = true
	}
	return out
}
