package models_test

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// The paused-holder bug, as a history. c1 holds the lock, reads the counter
// (0) and is paused past its lease; c2 is granted the lock, reads 0, writes 1;
// c1 wakes up and writes 1 too. One increment is lost. (The pause is a
// fault window: it is why c1's lease ended, not the lock.)
//
//	c1  |-acquire t=10-| |-------- cs: read 0 ... (paused) ... write 1 --------| |-release-|
//	c2      |------------- acquire t=12 -------------| |-cs: read 0, write 1-| |-release-|
//	server:                   c1's lease lost ^
func Example() {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	v := func(n int64) *int64 { return &n }
	accepted := true
	events := []history.Event{
		{Time: ms(0), Type: history.Invoke, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l"},
		{Time: ms(10), Type: history.Ok, ID: 1, Client: "c1", Op: history.Acquire, Lock: "l", Token: 10},
		{Time: ms(20), Type: history.Invoke, ID: 2, Client: "c1", Op: history.CS, Lock: "l"},
		{Time: ms(25), Type: history.FaultStart, ID: 1, Fault: "pause-client c1 at before-write"},
		{Time: ms(30), Type: history.Invoke, ID: 3, Client: "c2", Op: history.Acquire, Lock: "l"},
		{Time: ms(1290), Type: history.LeaseLost, Client: "c1", AliveUntil: ms(1250)},
		{Time: ms(1300), Type: history.Ok, ID: 3, Client: "c2", Op: history.Acquire, Lock: "l", Token: 12},
		{Time: ms(1310), Type: history.Invoke, ID: 4, Client: "c2", Op: history.CS, Lock: "l"},
		{Time: ms(1320), Type: history.Ok, ID: 4, Client: "c2", Op: history.CS, Lock: "l", Token: 12, Value: v(0), Accepted: &accepted},
		{Time: ms(1330), Type: history.Invoke, ID: 5, Client: "c2", Op: history.Release, Lock: "l"},
		{Time: ms(1340), Type: history.Ok, ID: 5, Client: "c2", Op: history.Release, Lock: "l"},
		{Time: ms(1990), Type: history.FaultEnd, ID: 1, Fault: "pause-client c1 at before-write"},
		{Time: ms(2000), Type: history.Ok, ID: 2, Client: "c1", Op: history.CS, Lock: "l", Token: 10, Value: v(0), Accepted: &accepted},
		{Time: ms(2010), Type: history.Invoke, ID: 6, Client: "c1", Op: history.Release, Lock: "l"},
		{Time: ms(2020), Type: history.Ok, ID: 6, Client: "c1", Op: history.Release, Lock: "l"},
	}
	report, err := models.Check(history.Header{}, events, time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Println("safety:", report.Result())
	for _, v := range report.Safety {
		fmt.Printf("  %-14s %s\n", v.Check, v.Result)
	}
	fmt.Println("belief:", report.Belief.Result, "(two clients believed they held the lock)")
	fmt.Println(report.Safety[0].Evidence[0])
	fmt.Println(report.Safety[0].Evidence[1])
	// Output:
	// safety: FAIL
	//   counter        FAIL
	//   tokens         PASS
	//   stale-writes   PASS
	//   validity       PASS
	//   expired-waiter PASS
	//   lease-kept     PASS
	//   deadline       N/A
	//   told-lost      N/A
	//   release        PASS
	// belief: FAIL (two clients believed they held the lock)
	// c1 cs → ok read=0 token=10 write accepted [20ms, 2s]
	// c2 cs → ok read=0 token=12 write accepted [1.31s, 1.32s]
}

// A lock kept for nobody: c2's acquire lost its answer (its key stays
// under its live session), and c1 asks after the fault ended and waits 6 s
// with nobody granted, past the scenario's 5 s bound.
func ExampleCheckLiveness() {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	events := []history.Event{
		{Time: ms(0), Type: history.FaultStart, ID: 1, Fault: "lose-answer c2"},
		{Time: ms(1), Type: history.Invoke, ID: 1, Client: "c2", Op: history.Acquire, Lock: "l"},
		{Time: ms(30), Type: history.FaultEnd, ID: 1, Fault: "lose-answer c2"},
		{Time: ms(31), Type: history.Info, ID: 1, Client: "c2", Op: history.Acquire, Lock: "l", Error: "connection lost"},
		{Time: ms(40), Type: history.Invoke, ID: 2, Client: "c1", Op: history.Acquire, Lock: "l"},
		{Time: ms(6040), Type: history.Info, ID: 2, Client: "c1", Op: history.Acquire, Lock: "l", Error: "timed out"},
	}
	v := models.CheckLiveness(history.Pair(events), events, &history.Minimum{RegrantWithin: int64(5 * time.Second)})
	fmt.Println(v.Result)
	fmt.Println(v.Explanation)
	// Output:
	// FAIL
	// c1 waited 6s for the lock after the last fault (lose-answer c2) ended, and nobody was granted in that time (the lock must grant again within 5s): the lock was kept for nobody.
}
