package cpupressure

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// path is where Linux gives the CPU's pressure.
const path = "/proc/pressure/cpu"

// Read returns the machine's total CPU pressure so far: how long, since
// boot, at least one runnable task waited for a CPU.
func Read() (time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("cpupressure: %w", err)
	}
	return Parse(b)
}

// Parse reads the "some" line's total (microseconds) of a pressure file.
func Parse(b []byte) (time.Duration, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "some" {
			continue
		}
		for _, f := range fields[1:] {
			v, ok := strings.CutPrefix(f, "total=")
			if !ok {
				continue
			}
			us, err := strconv.ParseInt(v, 10, 64)
			if err != nil || us < 0 {
				return 0, fmt.Errorf("cpupressure: bad total %q", v)
			}
			return time.Duration(us) * time.Microsecond, nil
		}
	}
	return 0, fmt.Errorf("cpupressure: no \"some ... total=\" line")
}

// Sampler tells, one interval at a time, what share of it the machine's
// tasks waited for a CPU.
type Sampler struct {
	read    func() (time.Duration, error)
	last    time.Duration
	lastAt  time.Time
	started bool
}

// NewSampler returns a Sampler of Read.
func NewSampler() *Sampler { return &Sampler{read: Read} }

// Sample returns the share (0 to 1) of the time since the previous Sample
// during which some task waited for a CPU; false on the first call, and
// where the pressure cannot be read.
func (s *Sampler) Sample(now time.Time) (float64, bool) {
	total, err := s.read()
	if err != nil {
		return 0, false
	}
	prev, prevAt, had := s.last, s.lastAt, s.started
	s.last, s.lastAt, s.started = total, now, true
	elapsed := now.Sub(prevAt)
	if !had || elapsed <= 0 || total < prev {
		return 0, false
	}
	return min(float64(total-prev)/float64(elapsed), 1), true
}
