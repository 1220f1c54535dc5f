//go:build linux

package main

import (
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// keepCore locks the calling goroutine to its OS thread and gives every
// other thread of the process the lowest scheduling priority (nice 19), so
// that the Go runtime's helper threads no longer preempt a short serial
// solve. In a process's first milliseconds the runtime's monitor thread
// (sysmon) wakes every 20–80 µs; when the kernel wakes it on the core that
// runs the solve it preempts the solve each time. Measured on the project's
// 2-core VM (drknn-lfd at n = 200, 200 launches each, interleaved): solve
// median 4.80 ms either way, but p75 5.75 → 4.83 ms and p90 5.88 → 4.89 ms;
// the whole command's p90 9.20 → 8.27 ms. A thread started later by a niced
// thread inherits nice 19, one started by the locked thread goes through
// the runtime's template thread (niced too). It returns how many threads it
// lowered; a thread it may not lower (a sandbox's seccomp filter, say) is
// left as it was.
//
// Only for a solve that never waits for another goroutine (n ≤
// optlayer.SerialMaxN, garbage collector off): the lock makes every hand-off
// to another goroutine cost two thread switches, and a goroutine that ran on
// a niced thread would get almost no CPU on a busy machine.
func keepCore() int {
	runtime.LockOSThread()
	me := syscall.Gettid()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	lowered := 0
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil || tid == me {
			continue
		}
		if syscall.Setpriority(syscall.PRIO_PROCESS, tid, 19) == nil {
			lowered++
		}
	}
	return lowered
}
