// Package engine is the store-neutral core of a run: its clients (one
// step at a time each), recording every operation and fact onto every
// history, the critical section, background steps, fault windows on the
// clients' links, pauses and crashes, and a client's own clock where its
// lock runs as a program (the clock shim preloaded into it, moved by
// JumpClientClock: clientclock.go). A store is a Store — its links, its
// lock, and how it follows a grant (run/follow keeps its watches) — plus
// the faults of its own, in a package of its own (run/etcdrun,
// run/redisrun, run/zkrun, run/pgrun).
//
// # Adding a store
//
// A next store provides, in a package of its own:
//   - servers the lab starts and stops (a package under cluster/), each
//     client reaching them through a netproxy.Proxy of its own;
//   - a Store: Links (a client's proxies), Locker (its lock over them),
//     Follow and Released (does this grant still stand: a watch over the
//     grant's key and lease that records history.LeaseEnd or a grant gone
//     through Engine.Histories), Settle, Gone and Left (what wait-lease-gone
//     and wait-free wait for); and, where it can tell a client's writes
//     and requests on the wire, WriteTeller and RequestTeller (a pause at
//     in-acquire or in-release, between a lock's own commands: split.go),
//     where it can also show a write taking effect, LostAnswers (acquire
//     answer=lost: answers.go) and LostRequests (acquire next=lost:
//     requests.go), and
//     where it reads a client's connections (its session, whether it is
//     done asking), WireReader, and where it tells a waiter done asking,
//     Queueing; and where a lock rests on a session of the client's own
//     that the store may end under it (etcd's lease), SessionStore, with
//     the smaller hooks of hooks.go where the store has what they ask;
//   - an Env embedding *Engine that adds what a script.Target needs and
//     only the store knows: Members, Close and its own faults (Isolate,
//     Kill…), each applied through Engine.Apply so its window is on the
//     timeline (a server's clock moved through Engine.JumpClock: clock.go);
//   - its locks, written against package lock's contract, and a
//     scenarios.Backend that registers them with the catalog.
package engine
