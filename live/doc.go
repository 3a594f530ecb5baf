// Package live is the live lab: a real etcd cluster — or Redis — driven
// from a web page. A student acts with buttons and with the scenario-file
// language (the same reader, the same errors); every step runs on a real
// run (an Engine of the lab's Store), and the page shows, as the history grows, the report's
// timeline and checks and, at each moment, whether two clients believe
// they hold the lock and whether each resource is still correct. What
// was done saves as a scenario file that `locklab run --script` runs
// again; a catalog scenario loads to be stepped through with its
// narration.
//
// Where things are:
//   - lab.go: the Lab — one run at a time, one command at a time (a
//     queue: a reset waits for the step in flight), its steps, Reset, Do,
//     Load (the lessons of the lab's store), Next, Save and the checks as
//     they stand
//   - store.go: Store and Engine — etcd's (one cluster, a key prefix per
//     run) and another store's (servers started for each run)
//   - server.go: the HTTP server — the page, commands, server-sent events,
//     and the guard: loopback Hosts only, no change from another origin,
//     bounded request bodies
//   - exercise.go: the guided exercises, each judged from the run's checks
//     and histories
//   - page.html: the page, embedded
package live
