package testsize

import (
	"runtime"
	"testing"
	"time"
)

// The idle CPUs are read from the kernel, between none and every CPU.
func TestIdleCPUsIsAShareOfTheCPUs(t *testing.T) {
	idle, ok := idleCPUs(50 * time.Millisecond)
	if !ok {
		t.Fatal("/proc/stat could not be read")
	}
	if idle < 0 || idle > float64(runtime.NumCPU())+0.01 {
		t.Fatalf("%.2f CPUs idle of %d", idle, runtime.NumCPU())
	}
	t.Logf("%.2f of %d CPUs idle", idle, runtime.NumCPU())
}
