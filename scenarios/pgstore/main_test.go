package pgstore_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/locklab/locklab/internal/leaks"
	"github.com/locklab/locklab/internal/testsize"
)

func TestMain(m *testing.M) {
	// Its tests run whole lessons on a real postgres: not beside the other
	// lesson packages (testsize.Alone says why).
	testsize.Alone()
	goleak.VerifyTestMain(m, leaks.Known()...)
}
