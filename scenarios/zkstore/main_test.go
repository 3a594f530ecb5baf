package zkstore_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/locklab/locklab/internal/leaks"
	"github.com/locklab/locklab/internal/testsize"
)

func TestMain(m *testing.M) {
	// Its tests run whole lessons: not beside the other lesson packages
	// (testsize.Alone says why).
	testsize.Alone()
	// Its tests mostly wait — for a known-bad lock to wedge, a session to
	// lapse — each on an ensemble of its own: four at once on an idle
	// machine, go test's default on a busy one.
	testsize.WaitBound(4)
	goleak.VerifyTestMain(m, leaks.Known()...)
}
