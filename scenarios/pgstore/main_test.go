package pgstore_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/locklab/locklab/internal/leaks"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, leaks.Known()...) }
