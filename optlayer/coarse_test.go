package optlayer

import (
	"math"
	"math/rand"
	"testing"
)

// TestCoarseMatrix: the coarse matrix E of coarse.go, formed from the row
// masses alone, is ZᵀHZ — Z the class indicators on g, H the reduced
// operator of apply — with and without the Levenberg–Marquardt term, on a
// regularised solve's state and on an LP-only solve's (n = 300 > lpLargeMin)
// with a class whose budget cannot bind (slack.go: rank-one plan, no λ).
func TestCoarseMatrix(t *testing.T) {
	checkCoarseMatrix(t, "regularised", solvedState(t))
	p := hardProblem("separated", 4, 300, 5)
	th := p.Theta[0] * 0.5
	p.Theta = []float64{1e6, th, th, th, th}
	r, err := Solve(p, &Settings{LPOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !r.st.slack[0] || r.st.slack[1] {
		t.Fatalf("slack classes %v, want the first only", r.st.slack)
	}
	checkCoarseMatrix(t, "LP-only with a slack class", r.st)
}

func checkCoarseMatrix(t *testing.T, what string, st *state) {
	t.Helper()
	defer func() { st.reg = 0 }()
	dim := st.n + st.L
	w := st.newWork()
	z, hz := make([]float64, dim), make([]float64, dim)
	coupled := false
	for _, reg := range []float64{0, 0.3} {
		st.reg = reg
		var c coarseSpace
		e := c.matrix(st)
		for m := 0; m < st.M; m++ {
			clear(z)
			for q := st.off[m]; q < st.off[m+1]; q++ {
				z[q] = 1
			}
			st.apply(z, hz, w)
			for k := 0; k < st.M; k++ {
				var want float64
				for q := st.off[k]; q < st.off[k+1]; q++ {
					want += hz[q]
				}
				if got := e.At(k, m); math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("%s, reg %g: E[%d][%d] = %.15g, ZᵀHZ %.15g", what, reg, k, m, got, want)
				}
				if k != m && want != 0 {
					coupled = true
				}
			}
		}
	}
	if !coupled {
		t.Fatalf("%s: no row shared by two active classes: the coupling term was not checked", what)
	}
}

// TestCoarseCG: CG with the coarse space solves the reduced system to the
// same answer as with Jacobi's preconditioner alone. (Not in fewer
// iterations here: 20 against 16 on this small converged state, whose
// classes are far from slack; the whole solves where it pays are
// TestLPOnlyLargeCoarse's.)
func TestCoarseCG(t *testing.T) {
	st := solvedState(t)
	defer func() { st.coarse, st.cgTol, st.cgIters = false, 0, 0 }()
	dim := st.n + st.L
	rng := rand.New(rand.NewSource(5))
	rhs := make([]float64, dim)
	for k := range rhs {
		rhs[k] = rng.NormFloat64()
	}
	var x [2][]float64
	var its [2]int
	for k, coarse := range []bool{true, false} {
		st.coarse, st.cgTol, st.cgIters = coarse, 1e-10, 0
		x[k] = make([]float64, dim)
		if err := st.solveCG(rhs, x[k], st.newWork()); err != nil {
			t.Fatalf("coarse %v: %v", coarse, err)
		}
		its[k] = st.cgIters
	}
	var nx, nd float64
	for k := range x[0] {
		nx = max(nx, math.Abs(x[1][k]))
		nd = max(nd, math.Abs(x[0][k]-x[1][k]))
	}
	if nd > 1e-6*nx {
		t.Fatalf("solutions differ by %g (largest entry %g)", nd, nx)
	}
	t.Logf("CG iterations: %d with the coarse space, %d without", its[0], its[1])
}

// solvedState returns the state of a converged regularised solve (n = 78,
// M = 4, d = 3 Gaussian classes): the reduced system of its snapshot.
func solvedState(t *testing.T) *state {
	t.Helper()
	r, err := Solve(gaussProblem(78, 30, 3, 4, 0.1), nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.st
}
