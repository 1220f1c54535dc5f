package optlayer

import (
	"math"
	"testing"
)

// lambdaSolve must find the budget root whichever side of it λ starts on.
// Starting left of the root (budget violated, no upper bracket yet) it once
// returned at once with λ unchanged, which let tiny radii take thousands of
// Newton steps.
func TestLambdaSolveBothSides(t *testing.T) {
	p := gaussProblem(7, 40, 3, 4, 1e-3)
	in, err := p.instance()
	if err != nil {
		t.Fatal(err)
	}
	for _, start := range []float64{1e-3, 0.05, 50} {
		s := newSolver(in)
		s.init(nil)
		s.eps = 0.05
		for m := 0; m < s.M; m++ {
			s.lam[m] = start
			s.lambdaSolve(m)
			S, _ := s.budgetAt(m, s.lam[m])
			if r := math.Abs(S/s.theta[m] - 1); r > 0.05 {
				t.Errorf("start λ = %g, class %d: λ = %g leaves S/ϑ − 1 = %.3g", start, m, s.lam[m], r)
			}
		}
	}
}
