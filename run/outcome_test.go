package run_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/lock/resource"
	"github.com/locklab/locklab/run"
)

func ptr(v int64) *int64 { return &v }

// Every outcome renders as the scripts print it, from its facts alone.
func TestOutcomeString(t *testing.T) {
	for want, o := range map[string]run.Outcome{
		"ready":                                      {Kind: run.Ready},
		"c1: connected to m2":                        {Kind: run.Connected, Client: "c1", Member: "m2"},
		"c1: granted token=t3":                       {Kind: run.Granted, Client: "c1", Token: "t3"},
		"c2: error: session expired":                 {Kind: run.Failed, Client: "c2", Failure: run.FailSessionExpired},
		"c2: error: holds no grant":                  {Kind: run.Failed, Client: "c2", Failure: run.FailNoGrant},
		"c2: error: etcdserver: too many":            {Kind: run.Failed, Client: "c2", Failure: run.FailOther, Detail: "etcdserver: too many"},
		"c1: released":                               {Kind: run.Released, Client: "c1"},
		"c1: released a grant whose lease had ended": {Kind: run.ReleasedEnded, Client: "c1"},
		"c1: release error: not held":                {Kind: run.ReleaseFailed, Client: "c1", Failure: run.FailNotHeld},
		"c1: release error: connection lost\nserver: c1's release took effect": {
			Kind: run.ReleaseFailed, Client: "c1", Failure: run.FailConnectionLost, Effected: true},
		"c2: acquiring":                          {Kind: run.Started, Client: "c2", Doing: run.DoingAcquire},
		"c1: will pause at before-write":         {Kind: run.WillPause, Client: "c1", Point: resource.BeforeWrite},
		"c1: paused at before-release, link cut": {Kind: run.Paused, Client: "c1", Point: resource.BeforeRelease},
		"server: c2's lease ended (lapse)":       {Kind: run.LeaseEnded, Client: "c2", Mode: "lapse"},
		"server: c1's lease is gone":             {Kind: run.LeaseGone, Client: "c1"},
		"c3: waiting":                            {Kind: run.Waiting, Client: "c3"},
		"all faults undone":                      {Kind: run.Healed},
		"error: unknown client \"c9\"":           run.Errored(errors.New(`unknown client "c9"`)),
		"c1: unfenced read 4 wrote 5; fenced read 4 rejected: stale token; etcd-guarded read 4 rejected: lock lost": {
			Kind: run.Section, Client: "c1", Writes: []run.Write{
				{Resource: "unfenced", Read: ptr(4), Written: resource.Written{Accepted: true}},
				{Resource: "fenced", Read: ptr(4), Written: resource.Written{Rejection: resource.StaleToken, Reason: "stale token 3 < 5"}},
				{Resource: "etcd-guarded", Read: ptr(4), Written: resource.Written{Rejection: resource.LockLost}},
			}},
		"c1: fenced error: timed out": {Kind: run.Section, Client: "c1", Writes: []run.Write{
			{Resource: "fenced", Failure: run.FailTimedOut}}},
	} {
		assert.Equal(t, want, o.String())
	}
}

// Only a grant is granted: the walk learns from this, not from the text.
func TestOnlyAGrantIsGranted(t *testing.T) {
	assert.True(t, run.Outcome{Kind: run.Granted, Client: "c1", Token: "t1"}.Granted())
	for _, k := range []run.Kind{run.Failed, run.Started, run.Waiting, run.StepError, run.Released} {
		assert.False(t, run.Outcome{Kind: k, Client: "c1"}.Granted(), "kind %d", k)
	}
}

// A step's outcome is facts; String is how a script prints them.
func ExampleOutcome() {
	o := run.Outcome{Kind: run.Failed, Client: "c2", Failure: run.FailTimedOut}
	fmt.Println(o.Granted())
	fmt.Println(o)
	fmt.Println(run.Outcome{Kind: run.Granted, Client: "c2", Token: "t2"})
	// Output:
	// false
	// c2: error: timed out
	// c2: granted token=t2
}

// A step that came to no outcome prints the error that stopped it, and one
// that came to one prints that, whatever error came with it.
func TestSettled(t *testing.T) {
	assert.Equal(t, `error: unknown client "c9"`, run.Settled(run.Outcome{}, errors.New(`unknown client "c9"`)).String())
	assert.Equal(t, run.StepError, run.Settled(run.Outcome{}, nil).Kind, "no outcome and no error is still no outcome")
	crashed := run.Outcome{Kind: run.Crashed, Client: "c1"}
	assert.Equal(t, crashed, run.Settled(crashed, errors.New("undo failed")))
}

// A store's client that says its connection broke in words of its own
// (go-zookeeper's "zk: connection closed") is classed as every store's
// broken connection is, once the store names its error.
func TestAStoresOwnConnectionLostErrorIsALostConnection(t *testing.T) {
	closed := errors.New("store: connection closed")
	assert.Equal(t, "c1: error: store: connection closed", run.FailedOutcome(run.Failed, "c1", closed).String())
	run.StoreErrors(run.ErrorsAre(run.FailConnectionLost, closed))
	assert.Equal(t, "c1: error: connection lost", run.FailedOutcome(run.Failed, "c1", fmt.Errorf("acquire: %w", closed)).String())
}

// A program that answers "error unavailable …" on a store whose client has
// no error of its own for it (Redis, ZooKeeper) lost its connection, as
// the protocol says, on every store; any other unknown error keeps its
// words.
func TestAProgramsUnavailableAnswerIsALostConnection(t *testing.T) {
	var l proc.Lock
	l.Who = "redislock"
	assert.Equal(t, "c1: release error: connection lost",
		run.FailedOutcome(run.ReleaseFailed, "c1", l.AnswerErr("unavailable 3 masters did not answer")).String())
	assert.Equal(t, "c1: release error: redislock: disk full",
		run.FailedOutcome(run.ReleaseFailed, "c1", l.AnswerErr("disk full")).String())
}
