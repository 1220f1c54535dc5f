//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// threadNice reads the nice value of thread tid of this process from
// /proc (field 19 of its stat line).
func threadNice(tid int) (int, error) {
	b, err := os.ReadFile(filepath.Join("/proc/self/task", strconv.Itoa(tid), "stat"))
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from 3 on
	if len(f) < 17 {
		return 0, fmt.Errorf("thread %d: short stat line %q", tid, s)
	}
	return strconv.Atoi(f[16])
}

// keepCore, run in a child process (it changes the priorities of the
// process's threads): every other thread ends at nice 19 (threads started
// since inherit it), the caller's keeps its own (0, or whatever nice the
// test runs under), and it reports lowering at least the runtime's monitor.
func TestKeepCore(t *testing.T) {
	if os.Getenv("DRKNN_KEEPCORE_CHILD") == "1" {
		before, err := threadNice(syscall.Gettid())
		if err != nil {
			fmt.Println("error", err)
			return
		}
		lowered := keepCore()
		me := syscall.Gettid()
		fmt.Println("before", before)
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			fmt.Println("error", err)
			return
		}
		others := 0
		for _, e := range tasks {
			tid, _ := strconv.Atoi(e.Name())
			nice, err := threadNice(tid)
			if err != nil {
				continue // the thread exited
			}
			if tid == me {
				fmt.Println("self", nice)
				continue
			}
			others++
			fmt.Println("other", nice)
		}
		fmt.Println("lowered", lowered, "others", others)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKeepCore$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DRKNN_KEEPCORE_CHILD=1")
	outb, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, outb)
	}
	var before, self, others, lowered, nOthers = -2, -1, 0, -1, -1
	for _, line := range strings.Split(string(outb), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "before":
			before, _ = strconv.Atoi(f[1])
		case len(f) == 2 && f[0] == "self":
			self, _ = strconv.Atoi(f[1])
		case len(f) == 2 && f[0] == "other":
			others++
			if f[1] != "19" {
				t.Errorf("another thread at nice %s, want 19", f[1])
			}
		case len(f) == 4 && f[0] == "lowered":
			lowered, _ = strconv.Atoi(f[1])
			nOthers, _ = strconv.Atoi(f[3])
		case len(f) > 0 && f[0] == "error":
			t.Fatalf("child: %s", line)
		}
	}
	if self != before {
		t.Errorf("the calling thread at nice %d, want %d (unchanged)\n%s", self, before, outb)
	}
	if others == 0 || nOthers != others {
		t.Fatalf("%d other threads seen (child counted %d), want ≥ 1 (the runtime's monitor)\n%s", others, nOthers, outb)
	}
	if lowered < 1 {
		t.Errorf("keepCore lowered %d threads, want ≥ 1\n%s", lowered, outb)
	}
}
