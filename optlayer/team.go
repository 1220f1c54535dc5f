package optlayer

import (
	"cmp"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
)

// team runs the class-parallel passes of one solve (forClassesW,
// forClasses) on the calling goroutine and one helper goroutine that
// lives as long as the team and waits for the next pass by spinning
// (yielding its processor at every turn) for up to teamSpin before it
// parks.
//
// Why not a goroutine per pass: the passes come every few hundred
// microseconds (two per conjugate-gradient iteration), and a goroutine
// started for each one waits for an idle processor to wake up. On a KVM
// guest that wake-up took longer than the pass: a pass of ten classes of
// 30,000 entries ran as fast serially as on two goroutines, and an LP-only
// solve at n = 2000 took as long with GOMAXPROCS=1 as with 2.
//
// A pass is handed over through state: the caller posts it (teamPosted),
// the helper claims it (teamClaimed) and reports it done (teamDone). A
// caller that has run out of classes before the helper claimed the pass
// takes it back (teamPosted → teamIdle) and runs the helper's share
// itself, so a helper that is slow to wake, busy with another solve's
// caller, or gone (close) costs nothing but the parallelism. Which
// goroutine runs which class never changes a result: every pass touches
// only its class's data and the scratch of its worker index w, and the
// fixed split (forClasses) keeps the scratch a class uses.
type team struct {
	state  atomic.Int32
	parked atomic.Bool
	wake   chan struct{}
	quit   chan struct{}
	next   atomic.Int32 // forClassesW: the next class to hand out
	// contention (the caller's side): passes posted and taken back in
	// the current window of teamWindow, and the passes left to run alone
	posts, backs, solo atomic.Int32
	// the posted pass (written by the caller before it posts)
	M     int
	order []int          // forClassesW: the order the classes are handed out in (nil: 0, 1, …)
	f     func(m, w int) // forClassesW
	fixed func(m int)    // forClasses: the odd classes are the helper's
}

const (
	teamIdle  = iota
	teamSetup // a caller is writing its pass
	teamPosted
	teamClaimed
	teamDone
)

// teamSpin is how long the helper waits for the next pass before it parks.
const teamSpin = 200 * time.Microsecond

// When the helper's processor is shared with another busy process, the
// helper is often off its core when a pass is posted (the caller takes
// the pass back) or in the middle of a class (the caller waits for it),
// and its spinning takes CPU from the caller: with one busy process beside
// it, `separated` n = 2000 took 5.8–6.2 s instead of 3.2 (a goroutine per
// pass, as before the team: 4.4–5.3 s), 48% of its passes taken back
// against 0.4% on a quiet machine. So a team whose window of teamWindow
// posted passes had teamBackMax or more taken back runs the next teamSolo
// passes on the caller alone (the helper parks), then tries again: 4.1–
// 6.1 s over seven runs beside the busy process (the host's placement of
// three threads on two cores spreads it), quiet runs unchanged. (A quiet
// machine has short bursts of take-backs while a parked helper wakes: at
// 16 of 64 one window of a solve went solo.)
const (
	teamWindow  = 64
	teamBackMax = 32
	teamSolo    = 1024
)

// newTeam starts a team's helper; close stops it. With one processor
// (GOMAXPROCS=1) it returns nil, and a nil team runs every pass on the
// caller.
func newTeam() *team {
	if runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	t := &team{wake: make(chan struct{}, 1), quit: make(chan struct{})}
	go t.help()
	return t
}

// close stops the helper (after the pass it is running, if any). A closed
// team still runs passes, on the caller alone.
func (t *team) close() {
	if t != nil {
		close(t.quit)
	}
}

func (t *team) help() {
	for {
		t0 := time.Now()
		for k := 0; ; k++ {
			if t.state.Load() == teamPosted && t.state.CompareAndSwap(teamPosted, teamClaimed) {
				if t.fixed != nil {
					for m := 1; m < t.M; m += 2 {
						t.fixed(m)
					}
				} else {
					t.take(1)
				}
				t.state.Store(teamDone)
				t0, k = time.Now(), 0
				continue
			}
			if k&63 == 63 && time.Since(t0) > teamSpin {
				break
			}
			runtime.Gosched()
		}
		t.parked.Store(true)
		if t.state.Load() != teamPosted {
			select {
			case <-t.wake:
			case <-t.quit:
				t.parked.Store(false)
				return
			}
		}
		t.parked.Store(false)
		select {
		case <-t.quit:
			return
		default:
		}
	}
}

// take runs f on the classes handed out from t.next until none is left.
func (t *team) take(w int) {
	for {
		m := int(t.next.Add(1)) - 1
		if m >= t.M {
			return
		}
		if t.order != nil {
			m = t.order[m]
		}
		t.f(m, w)
	}
}

// post hands a pass to the helper; false if the team is nil or busy with
// another caller's pass (the caller then runs the pass alone).
func (t *team) post(M int, order []int, f func(m, w int), fixed func(m int)) bool {
	if t == nil {
		return false
	}
	if t.solo.Load() > 0 {
		t.solo.Add(-1)
		return false
	}
	if !t.state.CompareAndSwap(teamIdle, teamSetup) {
		return false
	}
	t.M, t.order, t.f, t.fixed = M, order, f, fixed
	t.next.Store(0)
	t.state.Store(teamPosted)
	if t.parked.Load() {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// finish waits for the helper's share of the posted pass; it reports
// false when the helper never claimed it (the pass is taken back).
func (t *team) finish() bool {
	back := t.state.CompareAndSwap(teamPosted, teamIdle)
	if back {
		t.backs.Add(1)
	}
	if t.posts.Add(1) >= teamWindow {
		if t.backs.Load() >= teamBackMax {
			t.solo.Store(teamSolo)
		}
		t.posts.Store(0)
		t.backs.Store(0)
	}
	if back {
		return false
	}
	for t.state.Load() != teamDone {
		runtime.Gosched()
	}
	t.order, t.f, t.fixed = nil, nil, nil
	t.state.Store(teamIdle)
	return true
}

// forClassesW runs f(m, w) for every class m < M, handing the classes out
// one at a time to the caller (w = 0) and the helper (w = 1) as each
// becomes free, in the given order (a permutation of 0…M−1; nil: in
// increasing order): classes differ in their candidates and slack classes
// cost next to nothing, so a fixed split (forClasses) leaves one core
// waiting, and the largest first (lptOrder) leaves the least. Each f(m, w)
// must touch only class m's data and scratch w. A nil team runs every
// class on the caller with w = 0, in increasing order.
func (t *team) forClassesW(M int, order []int, f func(m, w int)) {
	if M < 2 || !t.post(M, order, f, nil) {
		for m := 0; m < M; m++ {
			f(m, 0)
		}
		return
	}
	t.take(0)
	t.finish() // taken back: the caller has already handed out every class
}

// forClasses runs f(m) for every class m < M: the even classes on the
// caller, the odd ones on the helper (or the caller, after its own, when
// the helper did not claim them).
func (t *team) forClasses(M int, f func(m int)) {
	if M < 2 || !t.post(M, nil, nil, f) {
		for m := 0; m < M; m++ {
			f(m)
		}
		return
	}
	for m := 0; m < M; m += 2 {
		f(m)
	}
	if !t.finish() {
		for m := 1; m < M; m += 2 {
			f(m)
		}
	}
}

// lptOrder writes into order (len(work)) the classes by decreasing work,
// ties by index: the largest-first order of forClassesW.
func lptOrder(order []int, work []int) {
	for m := range order {
		order[m] = m
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(work[b], work[a]) })
}
