package testsize

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// idleCPUs is how many CPUs were idle, on average, over d, from the
// kernel's CPU time counters (/proc/stat).
func idleCPUs(d time.Duration) (float64, bool) {
	idle0, total0, ok := cpuTimes()
	if !ok {
		return 0, false
	}
	time.Sleep(d) // a measurement's window, not a wait for a condition
	idle1, total1, ok := cpuTimes()
	if !ok || total1 <= total0 {
		return 0, false
	}
	return float64(idle1-idle0) / float64(total1-total0) * float64(runtime.NumCPU()), true
}

// cpuTimes reads the idle and the total time of every CPU together, in
// clock ticks: the first line of /proc/stat (user nice system idle iowait
// irq softirq steal …; idle and iowait are idle).
func cpuTimes() (idle, total uint64, ok bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, 0, false
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, 0, false
	}
	for i, v := range fields[1:min(len(fields), 9)] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += n
		if i == 3 || i == 4 {
			idle += n
		}
	}
	return idle, total, true
}
