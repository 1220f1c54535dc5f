package optlayer

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTeamPasses: every class runs exactly once per pass, on a nil team (in
// order, w = 0), a live one (both kinds of pass, back to back and with
// pauses longer than teamSpin, so the helper parks and is woken), a team
// shared by concurrent callers, and a closed one.
func TestTeamPasses(t *testing.T) {
	check := func(name string, tm *team, M int, fixed bool) {
		t.Helper()
		calls := make([]int32, M)
		var order []int
		var bad atomic.Bool
		if fixed {
			tm.forClasses(M, func(m int) { atomic.AddInt32(&calls[m], 1) })
		} else {
			tm.forClassesW(M, nil, func(m, w int) {
				atomic.AddInt32(&calls[m], 1)
				if w < 0 || w > 1 || tm == nil && w != 0 {
					bad.Store(true)
				}
				if tm == nil {
					order = append(order, m)
				}
			})
		}
		for m, c := range calls {
			if c != 1 {
				t.Errorf("%s, M = %d, fixed %v: class %d ran %d times", name, M, fixed, m, c)
			}
		}
		if bad.Load() {
			t.Errorf("%s, M = %d: a worker index outside {0, 1} (or ≠ 0 without a helper)", name, M)
		}
		for k, m := range order {
			if m != k {
				t.Errorf("%s, M = %d: serial order %v", name, M, order)
				break
			}
		}
	}
	for _, M := range []int{1, 2, 3, 10} {
		check("nil team", nil, M, false)
		check("nil team", nil, M, true)
	}
	tm := newTeam()
	if tm == nil {
		t.Skip("GOMAXPROCS=1: no helper")
	}
	for k := 0; k < 2000; k++ {
		check("live team", tm, 1+k%10, k%3 == 0)
		if k%500 == 499 {
			time.Sleep(3 * teamSpin) // the helper parks; the next pass wakes it
		}
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 500; k++ {
				check("shared team", tm, 10, k%2 == 0)
			}
		}()
	}
	wg.Wait()
	tm.close()
	check("closed team", tm, 10, false)
	check("closed team", tm, 10, true)
}

// TestTeamBusy: a pass whose class blocks holds the helper (or, when the
// helper did not claim it in time, the caller); a second caller on the same
// team meanwhile runs its whole pass at once instead of waiting for the
// helper.
func TestTeamBusy(t *testing.T) {
	tm := newTeam()
	if tm == nil {
		t.Skip("GOMAXPROCS=1: no helper")
	}
	defer tm.close()
	started, release, doneA := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		tm.forClasses(2, func(m int) {
			if m == 1 {
				close(started)
				<-release
			}
		})
		close(doneA)
	}()
	<-started
	doneB := make(chan int)
	go func() {
		var n atomic.Int32
		tm.forClassesW(10, nil, func(m, w int) { n.Add(1) })
		doneB <- int(n.Load())
	}()
	select {
	case n := <-doneB:
		if n != 10 {
			t.Errorf("the second caller ran %d of 10 classes", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second caller waited for the held helper")
	}
	close(release)
	<-doneA
}

// TestLPTOrder: the classes by decreasing work, ties in index order, and a
// live team's pass in that order still runs every class once.
func TestLPTOrder(t *testing.T) {
	work := []int{3, 9, 0, 9, 5, 3}
	order := make([]int, len(work))
	lptOrder(order, work)
	want := []int{1, 3, 4, 0, 5, 2}
	for k := range want {
		if order[k] != want[k] {
			t.Fatalf("lptOrder(%v) = %v, want %v", work, order, want)
		}
	}
	tm := newTeam()
	defer tm.close()
	calls := make([]int32, len(work))
	tm.forClassesW(len(work), order, func(m, _ int) { atomic.AddInt32(&calls[m], 1) })
	for m, c := range calls {
		if c != 1 {
			t.Errorf("class %d ran %d times", m, c)
		}
	}
}

// TestTeamSolo: a team whose helper never claims a pass (none is running
// here) has every posted pass taken back; after a window of them it runs
// teamSolo passes without posting, then posts again.
func TestTeamSolo(t *testing.T) {
	tm := &team{wake: make(chan struct{}, 1), quit: make(chan struct{})} // no helper
	pass := func() {
		var n atomic.Int32
		tm.forClassesW(4, nil, func(m, w int) {
			if w != 0 {
				t.Fatalf("class %d on worker %d without a helper", m, w)
			}
			n.Add(1)
		})
		if n.Load() != 4 {
			t.Fatalf("%d of 4 classes ran", n.Load())
		}
	}
	for k := 0; k < teamWindow-1; k++ {
		pass()
	}
	if tm.solo.Load() != 0 || tm.backs.Load() != teamWindow-1 {
		t.Fatalf("after %d taken-back passes: solo %d, backs %d", teamWindow-1, tm.solo.Load(), tm.backs.Load())
	}
	pass()
	if tm.solo.Load() != teamSolo {
		t.Fatalf("a window of taken-back passes: solo %d, want %d", tm.solo.Load(), teamSolo)
	}
	for k := 0; k < teamSolo; k++ {
		pass()
	}
	if tm.solo.Load() != 0 || tm.posts.Load() != 0 {
		t.Fatalf("after the solo passes: solo %d, posts %d (want 0, 0: none posted)", tm.solo.Load(), tm.posts.Load())
	}
	pass()
	if tm.posts.Load() != 1 {
		t.Fatalf("the pass after the solo ones was not posted (posts %d)", tm.posts.Load())
	}
}
