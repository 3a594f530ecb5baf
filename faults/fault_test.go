package faults_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/faults"
)

func TestFaultStrings(t *testing.T) {
	cases := map[string]faults.Fault{
		"partition m1 | m2 m3":            {Kind: faults.Partition, Groups: [][]string{{"m1"}, {"m2", "m3"}}},
		"kill-leader":                     {Kind: faults.KillLeader},
		"pause-client c1 at before-write": {Kind: faults.PauseClient, Client: "c1", Point: "before-write"},
		"expire-lease c2 (lapse)":         {Kind: faults.ExpireLease, Client: "c2", Mode: faults.ModeLapse},
		"delay-client c1 50ms":            {Kind: faults.DelayClient, Client: "c1", Delay: faults.Duration(50 * time.Millisecond)},
		"crash-client c3":                 {Kind: faults.CrashClient, Client: "c3"},
		"lose-answer c2":                  {Kind: faults.LoseAnswer, Client: "c2"},
		"lose-request c2":                 {Kind: faults.LoseRequest, Client: "c2"},
	}
	for want, f := range cases {
		assert.Equal(t, want, f.String())
		assert.NoError(t, f.Validate())
	}
}

// Every fault kind says in one line what it does (locklab list shows it).
func TestEveryKindIsDescribed(t *testing.T) {
	for _, k := range faults.Kinds() {
		assert.NotEmpty(t, faults.Describe(k), k)
	}
	assert.Empty(t, faults.Describe("no-such-fault"))
}
