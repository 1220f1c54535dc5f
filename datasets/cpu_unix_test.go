//go:build unix

package datasets

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds cpu-ms/op and cores (CPU time over wall time) to a
// benchmark's report, measured from cpu0 and wall0.
func reportCPU(b *testing.B, cpu0 time.Duration, wall0 time.Time) {
	cpu, wall := cpuTime()-cpu0, time.Since(wall0)
	if b.N > 0 && wall > 0 {
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
	}
}
