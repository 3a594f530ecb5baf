package script

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/run"
)

// A grant with no fencing token is held to what a script says of it but
// its token: the failover lesson's "c2: granted token=t1" (the token went
// back) is no claim about a lock that gives none; a grant with a token is
// held to its label.
func TestATokenlessGrantIsNotHeldToATokenLabel(t *testing.T) {
	want := "c2: granted token=t1"
	tokenless := run.Outcome{Kind: run.Granted, Client: "c2", Token: "t2", Tokenless: true}
	assert.True(t, Matches(tokenlessWant(want, tokenless), tokenless.String()))
	tokened := run.Outcome{Kind: run.Granted, Client: "c2", Token: "t2"}
	assert.False(t, Matches(tokenlessWant(want, tokened), tokened.String()))
	failed := run.Outcome{Kind: run.Failed, Client: "c2", Tokenless: true}
	assert.Equal(t, want, tokenlessWant(want, failed), "only a grant is relabelled")
	assert.False(t, Matches(tokenlessWant("c2: granted token=t1 on a new lease", tokenless), tokenless.String()),
		"the rest of the line still counts")
}
