package optlayer

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// solveBlocks is solveBlocksContext without a context (blocks_test.go).
func solveBlocks(p *Problem, blocks [][]int, s *Settings, o blockOpts) (*BlocksResult, error) {
	return solveBlocksContext(context.Background(), p, blocks, s, o)
}

// pollCtx is a context whose Err is context.Canceled from its (after+1)th
// call on (never with after < 0), counting the calls: a cancellation at a
// known point of a solve, without timing.
type pollCtx struct {
	context.Context
	after int64
	n     atomic.Int64 // the calls so far (SolveBlocks' blocks poll from several goroutines)
}

func newPollCtx(after int) *pollCtx {
	return &pollCtx{Context: context.Background(), after: int64(after)}
}

func (c *pollCtx) Err() error {
	if k := c.n.Add(1); c.after >= 0 && k > c.after {
		return context.Canceled
	}
	return nil
}

func (c *pollCtx) polls() int { return int(c.n.Load()) }

// cancelProblem is a hard instance (the separated kind) that takes well
// over 20 iterations, on two goroutines (n > SerialMaxN).
func cancelProblem(t *testing.T) *Problem {
	if testing.Short() {
		t.Skip("a hard instance of 600 points")
	}
	return hardProblem("separated", 4, 600, 10)
}

// checkStopped checks that a solve stopped by ctx returned nothing
// (gotResult false) and an error wrapping context.Canceled that says where
// it stopped, and that ctx was not polled after that.
func checkStopped(t *testing.T, what string, gotResult bool, err error, ctx *pollCtx, where string) {
	t.Helper()
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("%s: error %v, want one wrapping context.Canceled", what, err)
	}
	if gotResult {
		t.Fatalf("%s: a result beside the error %v", what, err)
	}
	if !strings.Contains(err.Error(), where) {
		t.Fatalf("%s: error %q does not say %q", what, err, where)
	}
	if ctx.polls() != int(ctx.after)+1 {
		t.Fatalf("%s: ctx polled %d times, want %d (no poll after the stop)", what, ctx.polls(), ctx.after+1)
	}
}

func TestSolveContextStops(t *testing.T) {
	p := cancelProblem(t)
	for _, s := range []*Settings{nil, {LPOnly: true}} {
		// uncancelled: the polls it makes (golden_test.go checks the
		// answers of the context's solves against those from before it)
		ctx := newPollCtx(-1)
		r, err := SolveContext(ctx, p, s)
		if err != nil {
			t.Fatal(err)
		}
		polls := ctx.polls()
		if r.Iterations < 20 || polls < 20 {
			t.Fatalf("settings %+v: %d iterations, %d polls: not a hard instance", s, r.Iterations, polls)
		}
		t.Logf("settings %+v: %d iterations, %d polls", s, r.Iterations, polls)
		// cancelled before the solve starts, and after it has (the first
		// poll is before the first iteration, one before each after it)
		for _, after := range []int{0, 1, 15, polls / 2} {
			c := newPollCtx(after)
			r, err := SolveContext(c, p, s)
			where := "solve stopped after 0 iterations"
			if after > 0 {
				where = "solve stopped after " + strconv.Itoa(after-1) + " iterations"
			}
			checkStopped(t, "SolveContext", r != nil, err, c, where)
		}
	}
}

func TestSolveBatchContextStops(t *testing.T) {
	p := cancelProblem(t)
	small := gaussProblem(1, 60, 3, 2, 0.5)
	ps := []*Problem{small, p, small}
	want, err := SolveBatch(ps, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx := newPollCtx(-1)
	got, err := SolveBatchContext(ctx, ps, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for k := range got {
		if !sameResult(got[k], want[k]) {
			t.Fatalf("problem %d differs from SolveBatch's with two workers", k)
		}
	}
	for _, workers := range []int{1, 2} {
		// stopped during problem 1 (the first's polls are well below 40)
		c := newPollCtx(40)
		rs, err := SolveBatchContext(c, ps, nil, workers)
		if err == nil || !errors.Is(err, context.Canceled) || rs != nil {
			t.Fatalf("workers %d: %d results, error %v; want none and context.Canceled", workers, len(rs), err)
		}
		if !strings.HasPrefix(err.Error(), "problem ") || !strings.Contains(err.Error(), "solve stopped after") {
			t.Fatalf("workers %d: error %q names no problem or iteration", workers, err)
		}
		if workers == 1 && !strings.HasPrefix(err.Error(), "problem 1: ") {
			t.Fatalf("workers 1: error %q, want problem 1's", err)
		}
		if c.polls() >= ctx.polls() {
			t.Fatalf("workers %d: %d polls, as many as the whole batch's %d", workers, c.polls(), ctx.polls())
		}
	}
}

func TestSolveBlocksContextStops(t *testing.T) {
	p := cancelProblem(t)
	blocks := StratifiedBlocks(p.Labels, 300, 1)
	want, err := SolveBlocks(p, blocks, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := newPollCtx(-1)
	got, err := SolveBlocksContext(ctx, p, blocks, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.P, want.P) || !slices.Equal(got.PReg, want.PReg) || got.LowerBound != want.LowerBound ||
		got.Objective != want.Objective || got.Iterations != want.Iterations {
		t.Fatal("SolveBlocksContext's answer differs from SolveBlocks'")
	}
	// in the blocks' solves
	c := newPollCtx(30)
	r, err := SolveBlocksContext(c, p, blocks, nil)
	if err == nil || !errors.Is(err, context.Canceled) || r != nil {
		t.Fatalf("in the blocks: %v, error %v; want no result and context.Canceled", r, err)
	}
	if !strings.Contains(err.Error(), "block ") || !strings.Contains(err.Error(), "solve stopped after") {
		t.Fatalf("in the blocks: error %q names no block or iteration", err)
	}
	// in the lower bound: its polls are the last (the blocks solve on
	// one goroutine each, polling their own count; the bound's come after)
	c = newPollCtx(ctx.polls() - 1)
	r, err = SolveBlocksContext(c, p, blocks, nil)
	checkStopped(t, "SolveBlocksContext (bound)", r != nil, err, c, "lower bound stopped before its pass")
}

// sameResult reports whether two results are the same bit for bit in what
// a caller reads.
func sameResult(a, b *Result) bool {
	eq := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	return slices.Equal(a.P, b.P) && slices.EqualFunc(a.PReg, b.PReg, eq) &&
		eq(a.Objective, b.Objective) && eq(a.LowerBound, b.LowerBound) &&
		a.Iterations == b.Iterations && a.Status == b.Status &&
		slices.EqualFunc(a.Dual.G, b.Dual.G, eq) && slices.EqualFunc(a.Dual.Lambda, b.Dual.Lambda, eq) &&
		slices.EqualFunc(a.Dual.Alpha, b.Dual.Alpha, eq) && eq(a.Residual, b.Residual)
}
