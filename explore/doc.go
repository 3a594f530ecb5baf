// Package explore searches for schedules that break a lock: rapid draws
// scenario scripts (script.Walk) and runs each on a real cluster, checks
// a property of what happened, and shrinks a failing script to a short one
// a person can read — and run again with `locklab run --script`.
//
// Every drawn step waits on an observable condition, so a script runs the
// same way each time it runs; that is what makes rapid's shrinking work on
// a real cluster. One cluster serves every case; each case has its own key
// prefix. A lock of another store runs on that store's engine
// (Config.Open: the command line's Redis locks on the lab's Redis).
//
// Where things are:
//   - explore.go: Run (rapid's search and shrinking), RunCase (one drawn
//     case on the cluster, its script and reports)
//   - property.go: the properties a case must hold (Safe…)
package explore
