package optlayer

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

func TestLPEpsSchedule(t *testing.T) {
	for _, c := range []struct{ tol, start, cert float64 }{
		{1e-3, 0.2, 0.004}, {1e-2, 0.2, 0.04}, {0.1, 0.2, 0.2}, {1, 0.2, 0.2}, {1e-12, 0.2, epsFloor},
	} {
		start, cert := lpEpsSchedule(c.tol)
		if math.Abs(start-c.start) > 1e-15 || math.Abs(cert-c.cert) > 1e-15 {
			t.Errorf("lpEpsSchedule(%g) = %g, %g; want %g, %g", c.tol, start, cert, c.start, c.cert)
		}
	}
}

// The LP-only stages give the certified LP answer: a feasible P whose
// objective is within Tol of the exact LP value (gonum's simplex), a lower
// bound below it, on separated and hard small instances and several
// tolerances; no gradient from the unconverged regularised solution.
func TestLPOnlyStages(t *testing.T) {
	type inst struct {
		name string
		p    *Problem
	}
	var set []inst
	for seed := int64(1); seed <= 4; seed++ {
		set = append(set, inst{fmt.Sprintf("gauss seed %d", seed), gaussProblem(seed, 20+4*int(seed), 2+int(seed%3), 4, 0.1)})
	}
	for _, kind := range hardKinds {
		set = append(set, inst{kind, hardProblem(kind, 3, 30, 3)})
	}
	above := 0 // solves that ended above the default ε (the regularised path never does)
	for _, c := range set {
		v := exactLP(t, c.p)
		for _, tol := range []float64{1e-2, 1e-3, 1e-5} {
			r, err := Solve(c.p, &Settings{LPOnly: true, Tol: tol})
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != Optimal || r.RelGap > tol || r.Gap != math.Max(0, r.Objective-r.LowerBound) {
				t.Fatalf("%s tol %g: status %d, bounds [%v, %v], rel gap %g", c.name, tol, r.Status, r.LowerBound, r.Objective, r.RelGap)
			}
			if r.LowerBound > v+1e-9*v || r.Objective < v-1e-9*v || r.Objective-v > tol*v*(1+1e-9) {
				t.Fatalf("%s tol %g: bounds [%.12g, %.12g], exact LP %.12g", c.name, tol, r.LowerBound, r.Objective, v)
			}
			checkFeasible(t, c.p, r)
			if r.Epsilon > DefaultEpsilon {
				above++
			}
			if _, err := r.VJP(make([]float64, r.M*r.N)); r.Residual > defaultRegTol(tol) && !errors.Is(err, ErrNotConverged) {
				t.Fatalf("%s tol %g: VJP after LPOnly: %v, want ErrNotConverged", c.name, tol, err)
			}
		}
	}
	if above == 0 {
		t.Fatal("no LPOnly solve ended above the default ε: the LP-only stages were not tested")
	}
}

// On the benchmark sizes the LP-only stages certify with fewer iterations
// than the regularised solve, at their own ε.
func TestLPOnlyStagesBench(t *testing.T) {
	for _, c := range benchCases[:2] {
		p := benchProblem(c.n, c.M, c.seed)
		full, err := Solve(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		lp, err := Solve(p, &Settings{LPOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if lp.Status != Optimal || lp.RelGap > DefaultTol || lp.LowerBound > full.Objective || lp.Objective < full.LowerBound {
			t.Fatalf("n = %d: LPOnly bounds [%v, %v], full solve [%v, %v]", c.n, lp.LowerBound, lp.Objective, full.LowerBound, full.Objective)
		}
		if lp.Iterations >= full.Iterations {
			t.Fatalf("n = %d: LPOnly took %d iterations, the full solve %d", c.n, lp.Iterations, full.Iterations)
		}
		if _, cert := lpEpsSchedule(DefaultTol); lp.Epsilon > cert || lp.Epsilon < epsFloor {
			t.Fatalf("n = %d: LPOnly ended at ε = %g, want a tight stage (≤ %g)", c.n, lp.Epsilon, cert)
		}
		checkFeasible(t, p, lp)
	}
}

// In the band just below the pooled radius the LP-only stages may not
// certify within lpStagesMaxIter (`separated` n = 200 at ϑ = 0.7 × median:
// 556 iterations in all); the solve then starts again on the regularised
// path's phases, which certify. Both results must be certified, feasible
// and agree with each other. (Above lpLargeMin such a solve takes the large
// path instead: TestLPOnlyLargePath.)
func TestLPOnlyFallback(t *testing.T) {
	if testing.Short() {
		t.Skip("two solves")
	}
	p := hardProblem("separated", 4, lpLargeMin, 10)
	lp, ref := lpAndRegularised(t, p, 3000)
	if lp.Iterations <= lpStagesMaxIter {
		t.Fatalf("LPOnly certified in %d iterations: not the fallback this test is for", lp.Iterations)
	}
	t.Logf("LPOnly [%.6f, %.6f] in %d iterations, regularised [%.6f, %.6f] in %d", lp.LowerBound, lp.Objective, lp.Iterations, ref.LowerBound, ref.Objective, ref.Iterations)
}

// lpAndRegularised solves p with LPOnly (at most maxIter iterations; 0: the
// default) and without, and checks that both are certified and feasible
// and that their certificates agree.
func lpAndRegularised(t *testing.T, p *Problem, maxIter int) (lp, ref *Result) {
	t.Helper()
	lp, err := Solve(p, &Settings{LPOnly: true, MaxIter: maxIter})
	if err != nil {
		t.Fatal(err)
	}
	ref, err = Solve(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range []*Result{lp, ref} {
		if r.Status != Optimal || r.RelGap > DefaultTol || r.LowerBound > r.Objective || r.LowerBound < 1 {
			t.Fatalf("%s: status %d, bounds [%v, %v], %d iterations", []string{"LPOnly", "regularised"}[k], r.Status, r.LowerBound, r.Objective, r.Iterations)
		}
		checkFeasible(t, p, r)
	}
	if lp.LowerBound > ref.Objective || ref.LowerBound > lp.Objective {
		t.Fatalf("certificates disagree: [%v, %v] vs regularised [%v, %v]", lp.LowerBound, lp.Objective, ref.LowerBound, ref.Objective)
	}
	return lp, ref
}

// Above lpLargeMin a cold LPOnly solve takes the large path (isLarge): the
// overlap instance at ϑ = 0.52 × median with n = 500, which the dense LP
// stages left uncertified after lpStagesMaxIter iterations and then solved
// again from the start, certifies there in about a quarter of that (113
// iterations when this was written), feasible and within the regularised
// solve's certificate.
func TestLPOnlyLargePath(t *testing.T) {
	if testing.Short() {
		t.Skip("n = 500, two solves")
	}
	p := overlapProblem(4, 500, 10, 16, 0.52)
	if !isLarge(p.N, config{lpOnly: true}) || isLarge(lpLargeMin, config{lpOnly: true}) || isLarge(p.N, config{}) {
		t.Fatalf("isLarge: want the large path for a cold LPOnly solve of %d points only (lpLargeMin %d)", p.N, lpLargeMin)
	}
	lp, _ := lpAndRegularised(t, p, 0)
	if lp.Iterations >= lpStagesMaxIter {
		t.Fatalf("LPOnly took %d iterations: the large path should certify before the dense stages' cap (%d)", lp.Iterations, lpStagesMaxIter)
	}
}
