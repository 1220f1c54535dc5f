package optlayer

import (
	"flag"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The solver trace: where an LP-only solve spends its Newton steps. It
// skips unless -trace is given:
//
//	go test ./optlayer -run TestTrace -v -args -trace separated:2000[:0.7] [-trace-seed 4] [-trace-every 5]
//	go test ./optlayer -run TestTrace -v -args -trace sweep:K -trace-seed S [-trace-sizes 1100,1500]
//
// (sweep:K: trial K of TestRandomSweep's seed S over -trace-sizes, its
// -sweep-sizes; -trace-steps adds each Newton step's line-search step and
// conjugate-gradient iterations)
//
// -trace names a kind of BenchmarkHard's set (hardProblem), n and optionally
// ϑ as a multiple of the median cost (default: the kind's own). The costs are
// computed as drknn-lfd computes them, and the solve is Settings{LPOnly:
// true}'s. Every -trace-every Newton steps it prints ε, the residual, the
// dual's own bound over every row (lowerDense: n² work, so the times include
// it), the upper bound of the plan at that step (upperPhi), the candidates
// and the time; at the end one line per ε stage and
// the result. Used to find where the separated kind's steps went
// (docs/PERFORMANCE.md, sessions of 2026-11-26).
var (
	traceSpec  = flag.String("trace", "", "TestTrace: kind:n[:rel] of hardProblem to trace (empty: skip)")
	traceSeed  = flag.Int64("trace-seed", 4, "TestTrace: the instance's seed")
	traceEvery = flag.Int("trace-every", 5, "TestTrace: print every this many Newton steps")
	traceSizes = flag.String("trace-sizes", "1100,1500,2000,2500,3000", "TestTrace: the sizes of -trace sweep:K's sweep (its -sweep-sizes)")
	traceSteps = flag.Bool("trace-steps", false, "TestTrace: print every Newton step's line-search step and CG iterations")
)

func TestTrace(t *testing.T) {
	if *traceSpec == "" {
		t.Skip("no -trace")
	}
	f := strings.Split(*traceSpec, ":")
	if len(f) < 2 || len(f) > 3 {
		t.Fatalf("-trace %q: want kind:n[:rel]", *traceSpec)
	}
	n, err := strconv.Atoi(f[1])
	if f[0] == "sweep" && (err != nil || n < 0) {
		t.Fatalf("-trace %q: K %q is not a trial number", *traceSpec, f[1])
	}
	if f[0] != "sweep" && (err != nil || n < 2) {
		t.Fatalf("-trace %q: n %q is not a size", *traceSpec, f[1])
	}
	var p *Problem
	if f[0] == "sweep" {
		if len(f) != 2 {
			t.Fatalf("-trace %q: want sweep:K", *traceSpec)
		}
		sizes, err := sizeList("trace-sizes", *traceSizes)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(*traceSeed))
		var desc string
		for k := 0; k <= n; k++ { // n is the trial here
			p, desc = sweepProblem(rng, sizes)
		}
		fmt.Printf("sweep seed %d trial %d: %s\n", *traceSeed, n, desc)
	} else {
		p = hardProblem(f[0], *traceSeed, n, 10)
	}
	if len(f) == 3 {
		rel, err := strconv.ParseFloat(f[2], 64)
		if err != nil || !(rel > 0) {
			t.Fatalf("-trace %q: rel %q is not a positive number", *traceSpec, f[2])
		}
		for k := range p.Theta {
			p.Theta[k] *= rel / hardRel(f[0])
		}
	}
	if p.Cost == nil {
		c, err := Costs(p.Features, p.N, p.Dim, Euclidean)
		if err != nil {
			t.Fatal(err)
		}
		p = &Problem{N: p.N, Cost: c, Labels: p.Labels, Theta: p.Theta}
	}
	in, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := (&Settings{LPOnly: true}).config(in)
	type stage struct {
		eps              float64
		first, last, nnz int
		t0, t1           float64
		lb               string // the last printed bound
	}
	var stages []stage
	t0 := time.Now()
	k := 0
	every := max(1, *traceEvery)
	cfg.trace = func(_ int, s *solver, r float64) {
		k++
		now := time.Since(t0).Seconds()
		if len(stages) == 0 || stages[len(stages)-1].eps != s.eps {
			stages = append(stages, stage{eps: s.eps, first: k, t0: now, lb: "–"})
		}
		st := &stages[len(stages)-1]
		st.last, st.t1, st.nnz = k, now, len(s.kk)
		if k%every == 0 {
			lb, ub := s.lowerDense(), s.upperPhi(nil)
			st.lb = fmt.Sprintf("%.5f (step %d)", lb, k)
			fmt.Printf("step %5d  eps %-8.3g  residual %-9.3g  bound %9.5f  upper %9.5f  candidates %9d  %7.2f s\n", k, s.eps, r, lb, ub, len(s.kk), now)
		}
	}
	if *traceSteps {
		steps, cg0 := 0, 0
		cfg.traceLS = func(t float64, ok bool, cg int) {
			steps++
			fmt.Printf("  newton step %5d  line search t %-8.3g ok %-5v  CG iterations %d\n", steps, t, ok, cg-cg0)
			cg0 = cg
		}
	}
	r := solveInstance(in, cfg)
	for _, st := range stages {
		fmt.Printf("stage eps %-8.3g  steps %5d–%-5d  %7.2f–%-7.2f s  candidates %9d  last printed bound %s\n", st.eps, st.first, st.last, st.t0, st.t1, st.nnz, st.lb)
	}
	fmt.Printf("result: status %d, %d iterations, objective %.6f, lower bound %.6f, relative gap %.3g, %.2f s\n",
		r.Status, r.Iterations, r.Objective, r.LowerBound, r.RelGap, time.Since(t0).Seconds())
	if r.Status != Optimal {
		t.Errorf("not certified: relative gap %.3g", r.RelGap)
	}
}
